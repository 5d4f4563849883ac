"""Statistics of the scaling study: per runtime and N, the descriptive statistics of an
instance's execution time (summary), and the slowdown, its mean relative to one instance on
bare metal, with a 95 % CI over runs where both have 2 runs or more, else a bootstrap over the
iterations (stats/run_level.py says which: ci_level), as paper 001's Fig. 3."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from interference.stats.descriptive import describe, prepare, valid
from interference.stats.run_level import ratio_at_level, reference
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
        for (rt, n), g in h.groupby(["runtime", "instances"]):
            r = (
                reference(g["repetition"], ref["repetition"])
                if g.index.equals(ref.index)
                else ratio_at_level(g["value"], g["repetition"], ref["value"], ref["repetition"], N_RESAMPLES, SEED,
                                    (host, rt, n))
            )  # fmt: skip
            rows.append(
                {
                    "host": host, "runtime": rt, "instances": n, "n": len(g), "runs": r.runs,
                    "mean_s": g["value"].mean(),
                    "reference": f"{ref_rt}, N={int(ref['instances'].iloc[0])}",
                    "reference_mean_s": ref["value"].mean(), "reference_runs": r.baseline_runs,
                    "slowdown": r.ratio, "ci_low": r.low, "ci_high": r.high, "ci_method": r.method,
                    "ci_level": r.level, "ci_df": r.df, "note": r.note,
                }
            )  # fmt: skip
    cols = SLOWDOWN.columns  # declared in __init__.py
    return (
        pd.DataFrame(rows, columns=cols).sort_values(["host", "runtime", "instances"]).reset_index(drop=True)
    )
