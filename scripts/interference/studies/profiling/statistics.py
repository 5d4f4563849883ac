"""Statistics of the profiling study (the tables predict.py reads; profiles.py has their columns):

  sensitivity   each microservice's degradation beside each bubble intensity, against itself alone
                and unlimited (Case 1u; limited, Case 1, in the limited placement 3b): the IR's
                sign, negative = worse; intensity 0 is the baseline itself (0)
  limit_effect  Case 1u against Case 1 (the limit's removal), the same orientation
  summary       descriptive statistics of every cell
Each table leads with host and runtime. A CI is at the runs level where some cell of the
microservice ran twice (variance components pooled over its cells, as the pair study's
interference.tsv), else a bootstrap over iterations; `ci_level` and `reason` say which."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import describe, prepare, valid
from interference.stats.resampling import relative_change, relative_change_ci
from interference.stats.variance_components import Components, mean_se, nested, ratio_ci, runs_of
from interference.studies.profiling.plan import ALONE_CASES, PROBE, baseline_case

N_RESAMPLES = 2000
SEED = 1
TEXT = [
    "host",
    "runtime",
    "case",
    "target",
    "resource",
    "intensity",
    "partner",
    "quota",
    "metric",
    "repetition",
]
CELL = ["case", "resource", "intensity", "partner", "quota"]
SUMMARY_GROUP = ["host", "runtime", "case", "target", "resource", "intensity", "partner", "metric"]
CI_COLUMNS = ["ci_low", "ci_high", "ci_level", "reason"]
SENSITIVITY_COLUMNS = ["host", "runtime", "microservice", "placement", "resource", "intensity", "metric",
                       "degradation", "ci_low", "ci_high", "runs", "ci_level", "reason"]  # fmt: skip
LIMIT_COLUMNS = ["host", "runtime", "microservice", "metric", "effect", *CI_COLUMNS]


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def valid_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """The samples that count: ok, with a value, inside the window beside their partner."""
    return valid(prepare(samples, TEXT)).copy()


def components(df: pd.DataFrame) -> Components | None:
    """Variance between iterations and between runs, pooled over a microservice's cells."""
    if df.empty:
        return None
    cells = df[CELL].astype(str).agg("/".join, axis=1)
    return nested(df["value"].to_numpy(), cells, df["repetition"])


def relative_with_ci(x_runs, b_runs, higher: bool, c: Components | None, key: tuple) -> dict:
    """The relative change of x's mean against b's (negative = worse) with its 95 % CI: from the
    variance components where runs were repeated, else a bootstrap over iterations."""
    x = np.concatenate(x_runs) if x_runs else np.empty(0)
    b = np.concatenate(b_runs) if b_runs else np.empty(0)
    out = dict(value=np.nan, ci_low=np.nan, ci_high=np.nan, ci_level="", reason="")
    if x.size == 0 or b.size == 0:
        out["reason"] = "no valid samples" if x.size == 0 else "no valid baseline samples"
        return out
    if b.mean() == 0:
        out["reason"] = "baseline mean is 0"
        return out
    out["value"] = relative_change(x.mean(), b.mean(), higher)
    if c is not None and c.df_run > 0 and np.isfinite(c.iteration) and min(x.size, b.size) >= 2:
        se_x = mean_se(c, len(x_runs), np.mean([r.size for r in x_runs]))
        se_b = mean_se(c, len(b_runs), np.mean([r.size for r in b_runs]))
        low, high = ratio_ci(x.mean() / b.mean(), se_x, se_b, c.df_run)
        out.update(ci_low=low - 1 if higher else 1 - high, ci_high=high - 1 if higher else 1 - low)
        out.update(ci_level="runs", reason=f"variance components, t with {c.df_run} df")
    elif min(x.size, b.size) >= 2:
        low, high, method, note = relative_change_ci(x, b, higher, N_RESAMPLES, SEED, key)
        out.update(ci_low=low, ci_high=high, ci_level="iterations")
        out["reason"] = "; ".join(n for n in (f"one run per cell: {method} over iterations", note) if n)
    else:
        out["reason"] = f"fewer than 2 samples (n={x.size}, baseline n={b.size}): no CI"
    return out


def _microservices(df: pd.DataFrame):
    """(host, runtime, microservice, metric, its valid samples) of every profiled microservice."""
    ms = df[df["target"] != PROBE]
    for (host, runtime, target, metric), g in ms.groupby(["host", "runtime", "target", "metric"], sort=True):
        yield host, runtime, target, metric, g


def sensitivity(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    df = valid_samples(read(inputs["samples"]))
    rows = []
    for host, runtime, target, metric, g in _microservices(df):
        c, higher = components(g), bool(g["higher_is_better"].iloc[0])
        beside = g[~g["case"].isin(ALONE_CASES) & (g["intensity"] != "")]
        for (placement, resource), cell in beside.groupby(["case", "resource"], sort=True):
            ident = dict(
                host=host, runtime=runtime, microservice=target, placement=placement, resource=resource
            )
            # Intensity 0 is the microservice alone, unlimited (limited for 3b): the baseline itself.
            alone = baseline_case(placement)
            base = runs_of(g[g["case"] == alone])
            rows.append({**ident, "intensity": 0.0, "metric": metric, "degradation": 0.0, "ci_low": 0.0,
                         "ci_high": 0.0, "runs": len(base), "ci_level": "baseline",
                         "reason": f"no bubble: Case {alone} itself"})  # fmt: skip
            for intensity, x in cell.groupby(cell["intensity"].astype(float), sort=True):
                key = (host, runtime, target, placement, resource, intensity, metric)
                r = relative_with_ci(runs_of(x), base, higher, c, key)
                rows.append({**ident, "intensity": intensity, "metric": metric, "degradation": r.pop("value"),
                             "runs": x["repetition"].nunique(), **r})  # fmt: skip
    return pd.DataFrame(rows, columns=SENSITIVITY_COLUMNS)


def limit_effect(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    """Case 1u against Case 1: what removing the limits does to the microservice alone."""
    df = valid_samples(read(inputs["samples"]))
    rows = []
    for host, runtime, target, metric, g in _microservices(df):
        c, higher = components(g), bool(g["higher_is_better"].iloc[0])
        unlimited, limited = runs_of(g[g["case"] == "1u"]), runs_of(g[g["case"] == "1"])
        r = relative_with_ci(unlimited, limited, higher, c, (host, runtime, target, metric))
        rows.append(
            {
                "host": host,
                "runtime": runtime,
                "microservice": target,
                "metric": metric,
                "effect": r.pop("value"),
                **r,
            }
        )
    return pd.DataFrame(rows, columns=LIMIT_COLUMNS)


def summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    return describe(read(inputs["samples"]), SUMMARY_GROUP)
