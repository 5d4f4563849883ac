"""The order this host's runs are measured in (config `run_order`).

With `shuffle` (the default) the runs of every study, runtime, run key and repetition are put
in a random order drawn from `seed`, so that cases, runtimes and repetitions interleave and a
slow drift of the machine (warming, other tenants of the hypervisor) does not line up with one
factor of the experiment. Without it: sorted by study, runtime, key and repetition.

Snakemake starts, among the jobs that are ready, the one of highest priority; the run rule's
priority is a run's distance from the end of this plan (common.smk), image builds come before
every run. Runs that wait for others (Study.after_all: the pair study's re-measured baselines)
are not drawn: they come last, in sorted order. The plan is a pure function of the set of
runs and the seed, so the report recomputes it from runs.tsv and the recorded config."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pandas as pd
from scipy import stats

Run = tuple[str, str, str, int]  # study, runtime, run key, repetition


def plan(
    runs: Iterable[Run], last: Iterable[Run] = (), shuffle: bool = True, seed: int = 1
) -> dict[Run, int]:
    """Each run's position (0 first): `runs` in a seeded random (or sorted) order, then `last`."""
    drawn = sorted(set(runs))
    if shuffle:
        random.Random(seed).shuffle(drawn)
    ordered = drawn + sorted(set(last) - set(drawn))
    return {run: i for i, run in enumerate(ordered)}


def agreement(runs: pd.DataFrame, order: dict, host: str) -> dict:
    """How the runs of `host` in runs.tsv rows (study, runtime, key, repetition, started) were
    executed against the plan of the config `order` ({shuffle, seed}); `last` are the rows whose
    study put them after the others (column `after_all`, when present)."""
    r = runs[(runs["host"] == host) & runs["started"].notna()].copy()
    if r.empty:
        return {"n": 0}
    ids = list(zip(r["study"], r["runtime"], r["key"], r["repetition"].astype(int)))
    last_mask = (
        r["after_all"].fillna(False).astype(bool) if "after_all" in r else pd.Series(False, index=r.index)
    )
    positions = plan(
        [i for i, m in zip(ids, last_mask) if not m], [i for i, m in zip(ids, last_mask) if m], **order
    )
    r["planned"] = [positions[i] for i in ids]
    r["executed"] = r["started"].rank(method="first").astype(int) - 1
    tau = stats.kendalltau(r["planned"], r["executed"]).statistic if len(r) > 1 else 1.0
    return {"n": len(r), "kendall_tau": float(tau), "span_s": float(r["started"].max() - r["started"].min())}
