"""The contention behind each measurement: per measured iteration, its performance relative to
the Case 1 mean of the same host, runtime, target and metric (above 1: better, whatever the
metric's direction) beside the run's telemetry over that iteration (host/telemetry_rates.py:
the host's pressure stall shares, context switches and steal, the member's CPU throttling and memory
failures). results/stats/pairs/contention.tsv; empty when the runs have no telemetry.
Summed up per case in contention_by_case.tsv, and against performance in pressure_correlation.tsv.

A member's cpu_cores is the sampler's where it saw the container over the whole iteration, else
what the loop read from the container's cgroup (a Case 1 container lives for one iteration,
often between two samples)."""

from __future__ import annotations

import pandas as pd

from interference.studies.pairs import schemas
from interference.studies.pairs.statistics import BASELINE

# Declared with their kinds in ../schemas.py.
TELEMETRY = schemas.TELEMETRY.columns
KEYS = schemas.CONTENTION_KEYS.columns
COLUMNS = schemas.CONTENTION.columns


def contention(samples: pd.DataFrame) -> pd.DataFrame:
    if not set(TELEMETRY) & set(samples.columns):
        return pd.DataFrame(columns=COLUMNS)
    d = samples[(samples["status"] == "ok") & samples["value"].notna()].copy()
    d = d[d["in_overlap"].astype(str) == "True"]
    for c in TELEMETRY:
        d[c] = pd.to_numeric(d[c], errors="coerce") if c in d else float("nan")
    if "own_cpu_cores" in d:
        d["cpu_cores"] = d["cpu_cores"].fillna(pd.to_numeric(d["own_cpu_cores"], errors="coerce"))
    group = ["host", "runtime", "target", "metric"]
    base = d[d["case"] == BASELINE].groupby(group)["value"].mean().rename("baseline")
    d = d.join(base, on=group)
    higher = d["higher_is_better"].astype(str) == "True"
    d["relative"] = (d["value"] / d["baseline"]).where(higher, d["baseline"] / d["value"])
    return d[COLUMNS].sort_values(KEYS, kind="stable").reset_index(drop=True)


PRESSURE_COLUMNS = schemas.PRESSURE_CORRELATION.columns
MIN_PRESSURE_SAMPLES = 5


def pressure_correlation(contention_table: pd.DataFrame) -> pd.DataFrame:
    """Per host, runtime and target: Spearman's rank correlation of a measured iteration's relative
    performance with the host's CPU pressure (some) over it, in the concurrent cases; only with at
    least MIN_PRESSURE_SAMPLES iterations and more than one pressure value."""
    from scipy import stats

    from interference.studies.pairs.cases import CONCURRENT_CASES

    d = contention_table.copy()
    for c in ("relative", "psi_cpu_some"):
        d[c] = pd.to_numeric(d.get(c), errors="coerce")
    d = d[d["case"].astype(str).isin(CONCURRENT_CASES) & d["relative"].notna() & d["psi_cpu_some"].notna()]
    rows = []
    for (host, runtime, target), t in d.groupby(["host", "runtime", "target"], sort=False):
        if len(t) >= MIN_PRESSURE_SAMPLES and t["psi_cpu_some"].nunique() > 1:
            rho, p = stats.spearmanr(t["psi_cpu_some"], t["relative"])
            rows.append({"host": host, "runtime": runtime, "target": target, "n": len(t), "rho": rho, "p": p})
    return pd.DataFrame(rows, columns=PRESSURE_COLUMNS)


# Per case: the shares and rates are averaged over the measured iterations, the counters summed.
CASE_MEANS = ["psi_cpu_some", "psi_cpu_full", "psi_memory_some", "psi_io_some", "throttled", "ctxt_per_s",
              "steal_cores"]  # fmt: skip
CASE_SUMS = ["nr_throttled", "memory_failcnt", "oom_kill"]
CASE_COLUMNS = ["host", "runtime", "case", "n_iterations", *CASE_MEANS, *CASE_SUMS]


def by_case(contention_table: pd.DataFrame) -> pd.DataFrame:
    """Per host, runtime and case: how many measured iterations (each member's once: the rows of
    its metrics share the iteration's telemetry), the mean of each share and rate over those that
    have a value and the sum of each counter; empty (NaN) where no iteration has one."""
    if contention_table.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    keys = ["host", "runtime", "case", "target", "partner", "member", "repetition", "iteration"]
    d = contention_table.drop_duplicates(keys).copy()
    for c in CASE_MEANS + CASE_SUMS:
        d[c] = pd.to_numeric(d[c], errors="coerce") if c in d else float("nan")
    g = d.groupby(["host", "runtime", "case"], sort=True)
    out = g[CASE_MEANS].mean().join(g[CASE_SUMS].sum(min_count=1))
    out.insert(0, "n_iterations", g.size())
    return out.reset_index()[CASE_COLUMNS]
