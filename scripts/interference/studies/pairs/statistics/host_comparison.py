"""Hosts side by side (paper 004: fog desktop vs edge Raspberry Pi), when the samples hold two or
more hosts (another machine's results imported with interference.steps.transfer):

  hosts        each cell (runtime, case, target, partner, metric) on every host relative to the
               same cell on the reference host (the first by name), > 1 better, bootstrap CI
  host_anova   per runtime, target and metric: log(value) ~ C(host) * C(case) over all cases, so
               the host × case interaction says whether placement costs differ between hosts

Both are empty with one host."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf

from interference.studies.pairs import schemas
from interference.studies.pairs.statistics import N_RESAMPLES, SEED, _prepare, _valid
from interference.studies.pairs.statistics.runtime_ratios import _relative_ci, relative_value

# Declared with their kinds in ../schemas.py.
HOST_COLUMNS = schemas.HOSTS.columns
HOST_ANOVA_COLUMNS = schemas.HOST_ANOVA.columns
TERMS = {"C(host)": "host", "C(case)": "case", "C(host):C(case)": "host:case", "Residual": "residual"}


def host_ratios(samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    df = _valid(_prepare(samples))
    hosts = sorted(df["host"].unique())
    if len(hosts) < 2:
        return pd.DataFrame(columns=HOST_COLUMNS)
    ref, rows = hosts[0], []
    cell = ["runtime", "case", "target", "partner", "metric"]
    for key, g in df.groupby(cell, sort=True):
        base = g.loc[g["host"] == ref, "value"].to_numpy()
        hib = bool(g["higher_is_better"].iloc[0])
        for host in hosts[1:]:
            x = g.loc[g["host"] == host, "value"].to_numpy()
            row = dict(zip(cell, key), unit=g["unit"].iloc[0], higher_is_better=hib, host=host, reference_host=ref,
                       n=x.size, mean=x.mean() if x.size else np.nan, reference_n=base.size,
                       reference_mean=base.mean() if base.size else np.nan)  # fmt: skip
            low = high = np.nan
            method = reason = ""
            if min(x.size, base.size) == 0:
                reason = f"no samples on {host if x.size == 0 else ref}"
            elif min(x.size, base.size) < 2:
                reason = "fewer than 2 samples on a side: no interval"
            else:
                low, high, method = _relative_ci(x, base, hib, n_resamples, seed, (*key, host))
            rel = relative_value(row["mean"], row["reference_mean"], hib) if x.size and base.size else np.nan
            rows.append(row | dict(relative=rel, relative_ci_low=low, relative_ci_high=high,
                                   relative_ci_method=method, reason=reason))  # fmt: skip
    return pd.DataFrame(rows, columns=HOST_COLUMNS)


def host_anova(samples: pd.DataFrame) -> pd.DataFrame:
    df = _valid(_prepare(samples))
    if df["host"].nunique() < 2:
        return pd.DataFrame(columns=HOST_ANOVA_COLUMNS)
    rows = []
    for (runtime, target, metric), d in df.groupby(["runtime", "target", "metric"], sort=True):
        head = dict(runtime=runtime, target=target, metric=metric)
        if d["host"].nunique() < 2 or d["case"].nunique() < 2:
            rows.append(head | dict(term="", note="needs two hosts and two cases with samples"))
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                # On the log scale: a host that is uniformly k times slower is a host effect,
                # not an interaction; host:case then says placement costs differ between hosts.
                formula = (
                    "np.log(value) ~ C(host) * C(case)"
                    if (d["value"] > 0).all()
                    else "value ~ C(host) * C(case)"
                )
                fit = smf.ols(formula, data=d).fit()
                table = sm.stats.anova_lm(fit, typ=2) if fit.df_resid >= 1 else None
            except (ValueError, np.linalg.LinAlgError) as e:
                table, why = None, f"model failed: {e}"
            else:
                why = "no residual degrees of freedom" if table is None else ""
        if table is None:
            rows.append(head | dict(term="", note=why))
            continue
        for term, r in table.iterrows():
            rows.append(head | dict(term=TERMS.get(term, term), df=r["df"], sum_sq=r["sum_sq"],
                                    F=r.get("F", np.nan), p=r.get("PR(>F)", np.nan), note=""))  # fmt: skip
    return pd.DataFrame(rows, columns=HOST_ANOVA_COLUMNS)
