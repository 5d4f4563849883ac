"""Statistics of the ping-pong study: the descriptive statistics per runtime, layer, message size
and metric (summary, with the %RSD of paper 003's Table I as cv); the transfer rate of each
layer relative to another at each message size (relative: the paper's Figure 3a against the
reference, 3b overlay against container and encryption against its unencrypted overlay), with a 95 % CI
over runs where both have 2 runs or more, else a bootstrap over the iterations (stats/run_level.py
says which: ci_level); and Table I, the min, mean and max %RSD over message sizes (rsd)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import describe, prepare, valid
from interference.stats.run_level import ratio_at_level
from interference.studies.pingpong import BARE_METAL_LAYERS, RELATIVE, RSD

GROUP = ["host", "runtime", "layer", "message_bytes", "metric"]
RATE = "transfer_rate"
BARE_METAL = "baremetal"  # the runtime of the loopback and reference layers
# (layer, relative to layer, figure): every layer against the reference (paper's Fig. 3a), the
# overlay's own cost over containers and encryption's over the same overlay unencrypted (3b).
COMPARISONS = (
    ("container", "reference", "3a"),
    ("overlay", "reference", "3a"),
    ("overlay-userspace", "reference", "3a"),
    ("encrypted", "reference", "3a"),
    ("reference", "loopback", "ceiling"),
    ("overlay", "container", "3b"),
    ("overlay-userspace", "container", "3b"),
    ("encrypted", "overlay-userspace", "3b"),
)
N_RESAMPLES = 2000
SEED = 1


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def _sorted(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    return df.sort_values(by, key=lambda c: c.astype(int) if c.name == "message_bytes" else c).reset_index(
        drop=True
    )


def summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    return _sorted(describe(read(inputs["samples"]), GROUP), GROUP)


def relative(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    df = valid(prepare(read(inputs["samples"]), GROUP))
    df = df[df["metric"] == RATE]
    cols = RELATIVE.columns  # declared in __init__.py
    rows = []
    for host, h in df.groupby("host"):
        container_runtimes = sorted(set(h["runtime"]) - {BARE_METAL})
        for layer, over, figure in COMPARISONS:
            # Bare metal against itself once; a container layer once per container runtime.
            bare = layer in BARE_METAL_LAYERS and over in BARE_METAL_LAYERS
            for rt in [BARE_METAL] if bare else container_runtimes:
                rt_of = {x: BARE_METAL if x in BARE_METAL_LAYERS else rt for x in (layer, over)}
                a = h[(h["runtime"] == rt_of[layer]) & (h["layer"] == layer)]
                b = h[(h["runtime"] == rt_of[over]) & (h["layer"] == over)]
                for m in sorted(set(a["message_bytes"]) & set(b["message_bytes"]), key=int):
                    x, base = a[a["message_bytes"] == m], b[b["message_bytes"] == m]
                    r = ratio_at_level(x["value"], x["repetition"], base["value"], base["repetition"],
                                       N_RESAMPLES, SEED, (host, rt, layer, over, m))  # fmt: skip
                    rows.append(
                        {
                            "host": host, "runtime": rt_of[layer], "layer": layer,
                            "baseline_runtime": rt_of[over], "baseline": over, "figure": figure,
                            "message_bytes": m, "n": len(x), "runs": r.runs, "baseline_runs": r.baseline_runs,
                            "mean": x["value"].mean(), "baseline_mean": base["value"].mean(),
                            "ratio": r.ratio, "ci_low": r.low, "ci_high": r.high, "ci_method": r.method,
                            "ci_level": r.level, "ci_df": r.df, "note": r.note,
                        }
                    )  # fmt: skip
    out = pd.DataFrame(rows, columns=cols)
    return _sorted(out, ["host", "figure", "runtime", "layer", "baseline", "message_bytes"])


def rsd(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    """Paper 003's Table I: per runtime and layer, the %RSD of the transfer rate (100 × SD / mean
    over a message size's tests), its min, mean and max over the message sizes, and the data moved."""
    s = summary(inputs, jobs)
    s = s[(s["metric"] == RATE)].copy()
    s["rsd_percent"] = 100 * s["cv"].astype(float)
    samples = valid(prepare(read(inputs["samples"]), GROUP))
    rate = samples[samples["metric"] == RATE].copy()
    # KiB/s × the test's seconds: the data one test moved, in GB.
    rate["gb"] = rate["value"] * (rate["end"].astype(float) - rate["start"].astype(float)) * 1024 / 1e9
    moved = rate.groupby(["host", "runtime", "layer"])["gb"].sum()
    rows = []
    for (host, rt, layer), g in s.groupby(["host", "runtime", "layer"]):
        v = g["rsd_percent"].dropna()
        rows.append(
            {
                "host": host, "runtime": rt, "layer": layer, "sizes": len(g), "min_rsd": v.min(),
                "avg_rsd": v.mean(), "max_rsd": v.max(), "data_gb": moved.get((host, rt, layer), np.nan),
            }
        )  # fmt: skip
    cols = RSD.columns  # declared in __init__.py
    return pd.DataFrame(rows, columns=cols).sort_values(["host", "runtime", "layer"]).reset_index(drop=True)
