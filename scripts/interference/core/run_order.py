"""The order this host's runs are measured in (config `run_order`).

With `shuffle` (the default) the runs of every study, runtime, run key and repetition are put
in a random order drawn from `seed`, so that cases, runtimes and repetitions interleave and a
slow drift of the machine (warming, other tenants of the hypervisor) does not line up with one
factor of the experiment. Without it: sorted by study, runtime, key and repetition.

Snakemake starts, among the jobs that are ready, the one of highest priority; the run rule's
priority is a run's distance from the end of this plan (common.smk), image builds come before
every run. Runs that wait for others (Study.after_all: the pair study's re-measured baselines)
are not drawn: they come last, in sorted order. The plan is a pure function of the set of
runs and the seed, so the run-facts step recomputes it from runs.tsv and the config's
run_order (steps/order_agreement.py: results/stats/run_order.tsv, which the report
reads)."""

from __future__ import annotations

import random
from collections.abc import Iterable

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
