"""The runtime comparison of the pair study: the Case 1 baseline of each runtime of a host
relative to a reference runtime (bare metal where it ran), with bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.stats.resampling import bootstrap_ci
from interference.studies.pairs import schemas
from interference.studies.pairs.statistics import (
    BASELINE,
    N_RESAMPLES,
    SEED,
    _prepare,
    _valid,
)

# Declared with their kinds in ../schemas.py; the number columns for readers of runtimes.tsv.
RUNTIME_COLUMNS = schemas.RUNTIMES.columns
RUNTIME_NUMERIC = schemas.RUNTIMES.numeric
# Bare metal is the reference where it ran; else Docker, else the first runtime by name.
REFERENCE_ORDER = ("baremetal", "docker")


def reference_runtime(runtimes) -> str:
    present = sorted(set(runtimes))
    return next((r for r in REFERENCE_ORDER if r in present), present[0])


def relative_value(mean: float, reference_mean: float, higher_is_better: bool) -> float:
    """Performance relative to the reference: > 1 is better, whatever the metric's direction."""
    return mean / reference_mean if higher_is_better else reference_mean / mean


def _relative_ci(x, ref, higher_is_better, n_resamples, seed, key):
    def statistic(a, b, axis=-1):
        return relative_value(np.mean(a, axis=axis), np.mean(b, axis=axis), higher_is_better)

    return bootstrap_ci(x, ref, statistic, n_resamples, seed, key)[:3]


def runtime_ratios(samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """Case 1 means of every runtime relative to the reference runtime of the same host."""
    df = _valid(_prepare(samples))
    df = df[df["case"] == BASELINE]
    rows = []
    for host, d in df.groupby("host", sort=True):
        ref = reference_runtime(d["runtime"])
        for (target, metric), g in d.groupby(["target", "metric"], sort=True):
            base = g.loc[g["runtime"] == ref, "value"].to_numpy()
            hib = bool(g["higher_is_better"].iloc[0])
            for runtime, x in g.groupby("runtime", sort=True)["value"]:
                x = x.to_numpy()
                row = dict(
                    host=host, target=target, metric=metric, unit=g["unit"].iloc[0], higher_is_better=hib,
                    runtime=runtime, reference=ref, n=x.size, mean=x.mean(), reference_n=base.size,
                    reference_mean=base.mean() if base.size else np.nan,
                )  # fmt: skip
                low = high = np.nan
                method, reason = "", ""
                if base.size == 0:
                    reason = f"no Case 1 samples on {ref}"
                elif runtime == ref:
                    low = high = 1.0
                    method, reason = "reference", "the reference itself"
                elif min(x.size, base.size) < 2:
                    reason = "fewer than 2 samples on a side: no interval"
                else:
                    low, high, method = _relative_ci(
                        x, base, hib, n_resamples, seed, (host, target, metric, runtime)
                    )
                rel = relative_value(row["mean"], row["reference_mean"], hib) if base.size else np.nan
                rows.append(dict(row, relative=rel, relative_ci_low=low, relative_ci_high=high,
                                 relative_ci_method=method, reason=reason))  # fmt: skip
    return pd.DataFrame(rows, columns=RUNTIME_COLUMNS)
