"""The CPU-share model's profile (issue 55, item 1): each microservice's speed at a share of the
CPU, from the quota sweep (case 1q: alone, every core allowed, a CFS quota of some cores) and the
busy sweep (case 1k: unlimited beside k containers each spinning one core), and its CPU demand
alone and unlimited.

  cpu_speed.tsv  per microservice and metric, one row per case measured alone:
                   1u   unlimited: speed 1 by definition, `cores` = the host's cores allowed
                   1q   under a quota: `cores` = the quota
                   1k   beside `busy` spinning containers: `cores` = the share the scheduler's
                        rules give it there (cpu_shares.busy_share: equal container weights,
                        its 1u demand against one core each)
                   1    Case 1 (limited as the pair study's: its own core(s)): `cores` empty
                 speed = the metric's mean against 1u's, oriented so that > 1 is faster
                 (value / 1u's where higher is better, 1u's / value where lower is), its 95 % CI;
                 cpu_cores = the mean CPU the member's container used over an iteration (cores);
                 threads = how many threads it keeps busy alone and unlimited (its 1u demand,
                 rounded, at least 1).
The interval is a bootstrap over iterations with one run a key (the study's own rule,
statistics.relative_with_ci: at the runs level where a key ran twice)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from interference.studies.profiling.cpu_shares import busy_share
from interference.studies.profiling.plan import BUSY_CASE, PROBE, QUOTA_CASE
from interference.studies.profiling.statistics import (
    components,
    read,
    relative_with_ci,
    runs_of,
    valid_samples,
)

CPU_SPEED_COLUMNS = [
    "host", "runtime", "microservice", "metric", "case", "cores", "busy", "speed", "ci_low", "ci_high",
    "cpu_cores", "threads", "runs", "ci_level", "reason",
]  # fmt: skip
CASES = ("1u", QUOTA_CASE, BUSY_CASE, "1")


def orient(relative: float, low: float, high: float, higher: bool) -> tuple[float, float, float]:
    """The speed (> 1 faster) and its CI from the metric's ratio to its baseline less 1 (x/b − 1,
    with its CI): the ratio itself where higher is better, its inverse where lower is."""
    ratio, r_low, r_high = 1 + relative, 1 + low, 1 + high
    if higher:
        return ratio, r_low, r_high
    with np.errstate(divide="ignore"):
        return 1 / ratio, 1 / r_high, 1 / r_low


def threads_of(demand: float) -> int:
    """The threads a microservice keeps busy, from its CPU use alone and unlimited."""
    return max(1, int(round(demand))) if np.isfinite(demand) else 1


def cpu_speed(inputs: dict[str, Path], jobs: int, cores: int | None = None) -> pd.DataFrame:
    """cpu_speed.tsv from the study's samples (empty where no quota was swept)."""
    df = valid_samples(read(inputs["samples"]))
    if "own_cpu_cores" not in df:  # a tree parsed before the quota sweep existed
        df["own_cpu_cores"] = ""
    if "busy" not in df:  # a tree parsed before the busy sweep existed
        df["busy"] = ""
    if not df["case"].isin([QUOTA_CASE, BUSY_CASE]).any():
        return pd.DataFrame(columns=CPU_SPEED_COLUMNS)
    df["busy"] = pd.to_numeric(df["busy"], errors="coerce")
    cores = cores or os.cpu_count() or 1
    df["own_cpu_cores"] = pd.to_numeric(df["own_cpu_cores"], errors="coerce")
    rows = []
    for (host, runtime, target, metric), g in df[df["target"] != PROBE].groupby(
        ["host", "runtime", "target", "metric"], sort=True
    ):
        c, higher = components(g), bool(g["higher_is_better"].iloc[0])
        base = g[g["case"] == "1u"]
        demand = base["own_cpu_cores"].mean()
        threads = threads_of(demand)
        for (case, quota, busy), x in g[g["case"].isin(CASES)].groupby(
            ["case", "quota", "busy"], sort=True, dropna=False
        ):
            if case == "1u":  # the reference itself
                r = dict(value=0.0, ci_low=0.0, ci_high=0.0, ci_level="baseline", reason="Case 1u itself")
            else:
                key = (host, runtime, target, metric, case, int(busy) if case == BUSY_CASE else quota)
                r = relative_with_ci(runs_of(x), runs_of(base), True, c, key)
            speed, low, high = orient(r.pop("value"), r.pop("ci_low"), r.pop("ci_high"), higher)
            core_count = (
                float(quota) if case == QUOTA_CASE
                else busy_share(demand, int(busy), cores) if case == BUSY_CASE
                else float(cores) if case == "1u" else np.nan
            )  # fmt: skip
            rows.append({"host": host, "runtime": runtime, "microservice": target, "metric": metric,
                         "case": case, "cores": core_count, "busy": busy,
                         "speed": speed, "ci_low": low, "ci_high": high,
                         "cpu_cores": x["own_cpu_cores"].mean(), "threads": threads,
                         "runs": x["repetition"].nunique(), **r})  # fmt: skip
    return pd.DataFrame(rows, columns=CPU_SPEED_COLUMNS)
