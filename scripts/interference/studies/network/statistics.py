"""Statistics of the network study: per runtime, direction, network mode and metric, the
descriptive statistics of the tests (summary), and each mean relative to bare metal's host-to-host
mean (relative), with a 95 % CI over runs where both have 2 runs or more, else a bootstrap over
the iterations (stats/run_level.py says which: ci_level), as paper 001 compares Table II's rows
with its Host - Host row; the to-remote rows (a server on another host: Tables IV and V)
relative to bare metal's host-to-remote row, as Table IV's Host - Host row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import describe, prepare, valid
from interference.stats.run_level import ratio_at_level, reference, run_sd
from interference.studies.network import RELATIVE

GROUP = ["host", "runtime", "direction", "mode", "metric"]
# The reference: bare metal to itself (or to the remote host, for to-remote rows); without it,
# Docker's host network (the same stack).
REFERENCES = {
    family: (("baremetal", direction, "host"), ("docker", direction, "host"))
    for family, direction in (("local", "to-host"), ("remote", "to-remote"))
}


def family(direction: str) -> str:
    return "remote" if direction == "to-remote" else "local"


N_RESAMPLES = 2000
SEED = 1


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    return describe(read(inputs["samples"]), GROUP).sort_values(GROUP).reset_index(drop=True)


def relative(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    df = valid(prepare(read(inputs["samples"]), GROUP))
    rows = []
    df["family"] = df["direction"].map(family)
    for (host, metric, fam), h in df.groupby(["host", "metric", "family"]):
        present = {tuple(k) for k in h[["runtime", "direction", "mode"]].drop_duplicates().to_numpy()}
        ref_key = next((r for r in REFERENCES[fam] if r in present), None)
        if ref_key is None:
            continue
        base = h[(h["runtime"] == ref_key[0]) & (h["direction"] == ref_key[1]) & (h["mode"] == ref_key[2])]
        for (rt, d, m), g in h.groupby(["runtime", "direction", "mode"]):
            x = g["value"].to_numpy()
            r = (
                reference(g["repetition"], base["repetition"])
                if (rt, d, m) == ref_key
                else ratio_at_level(x, g["repetition"], base["value"], base["repetition"], N_RESAMPLES, SEED,
                                    (host, metric, rt, d, m))
            )  # fmt: skip
            rows.append(
                {
                    "host": host, "runtime": rt, "direction": d, "mode": m, "metric": metric,
                    "unit": g["unit"].iloc[0], "n": len(x), "mean": x.mean(),
                    "sd": x.std(ddof=1) if len(x) > 1 else np.nan,
                    "runs": r.runs, "run_sd": run_sd(x, g["repetition"]),
                    "reference": "/".join(ref_key), "reference_mean": base["value"].mean(),
                    "ratio": r.ratio, "ci_low": r.low, "ci_high": r.high, "ci_method": r.method,
                    "ci_level": r.level, "ci_df": r.df, "note": r.note,
                }
            )  # fmt: skip
    cols = RELATIVE.columns  # declared in __init__.py
    return pd.DataFrame(rows, columns=cols).sort_values(GROUP).reset_index(drop=True)
