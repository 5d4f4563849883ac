"""Statistics of the scaling study: per runtime and N, the descriptive statistics of an
instance's execution time (summary), and the slowdown, its mean relative to one instance on
bare metal, with a bootstrap CI (resampling both groups), as paper 001's Fig. 3."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import describe, prepare, valid
from interference.stats.resampling import bootstrap_ci
from interference.studies.scaling import SLOWDOWN

GROUP = ["host", "runtime", "instances", "metric"]
REFERENCES = ("baremetal", "docker")  # bare metal when it ran, else Docker
N_RESAMPLES = 2000
SEED = 1


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    out = describe(read(inputs["samples"]), GROUP)
    out["instances"] = out["instances"].astype(int)
    return out.sort_values(["host", "runtime", "instances"]).reset_index(drop=True)


def _ratio(x, base, axis=-1):
    return np.mean(x, axis=axis) / np.mean(base, axis=axis)


def reference_runtime(runtimes) -> str:
    present = list(runtimes)
    return next((r for r in REFERENCES if r in present), sorted(present)[0])


def slowdown(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    df = valid(prepare(read(inputs["samples"]), GROUP))
    df["instances"] = df["instances"].astype(int)
    rows = []
    for host, h in df.groupby("host"):
        ref_rt = reference_runtime(h["runtime"].unique())
        ref = h[(h["runtime"] == ref_rt) & (h["instances"] == h[h["runtime"] == ref_rt]["instances"].min())]
        base = ref["value"].to_numpy()
        for (rt, n), g in h.groupby(["runtime", "instances"]):
            x = g["value"].to_numpy()
            low, high, method, note = (
                bootstrap_ci(x, base, _ratio, N_RESAMPLES, SEED, (host, rt, n))
                if len(x) >= 2 and len(base) >= 2
                else (np.nan, np.nan, "", "fewer than 2 samples: no CI")
            )
            rows.append(
                {
                    "host": host,
                    "runtime": rt,
                    "instances": n,
                    "n": len(x),
                    "mean_s": x.mean(),
                    "reference": f"{ref_rt}, N={int(ref['instances'].iloc[0])}",
                    "reference_mean_s": base.mean(),
                    "slowdown": x.mean() / base.mean(),
                    "ci_low": low,
                    "ci_high": high,
                    "ci_method": method,
                    "note": note,
                }
            )
    cols = SLOWDOWN.columns  # declared in __init__.py
    return (
        pd.DataFrame(rows, columns=cols).sort_values(["host", "runtime", "instances"]).reset_index(drop=True)
    )
