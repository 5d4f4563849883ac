"""The profiling study's parser: the measured member's iterations -> samples (the bubble's and a
partner's own output stay in the raw folder; they are not the profile's measurements). Each
sample carries its run's CPU quota (empty but in the quota sweep), its busy neighbours (empty
but in the busy sweep) and its iteration's own CPU use
in cores (the container's cgroup CPU time over the iteration; empty where the loop read none)."""

from __future__ import annotations

import pandas as pd

from interference import parsers
from interference.core.microservices import registry
from interference.core.samples import parse_iteration
from interference.studies.profiling.plan import PROBE

SAMPLE_COLUMNS = [
    "host", "runtime", "case", "target", "resource", "intensity", "partner", "repetition",
    "iteration", "metric", "value", "unit", "higher_is_better", "in_overlap", "start", "end", "status",
    "quota", "busy", "own_cpu_cores",
]  # fmt: skip


def parse(meta, raw_dir) -> pd.DataFrame:
    s = meta["settings"]
    ms = registry()[s["target"]]
    metrics = ms.metrics
    if s["target"] == PROBE:  # the probe reports the rate of its run's resource only
        metrics = tuple(m for m in metrics if m.name == f"{s['resource']}_rate")
    target = next(m for m in meta["members"] if m["role"] == "target")
    rows = [
        sample.row(
            host=s["host"],
            runtime=s["runtime"],
            case=s["case"],
            target=s["target"],
            resource=s.get("resource", ""),
            intensity=s.get("intensity", ""),
            partner=s.get("partner", ""),
            quota=s.get("quota", ""),
            busy=s.get("busy", ""),
            own_cpu_cores=it.get("own_cpu_cores", ""),
            repetition=s["repetition"],
            iteration=it["iteration"],
            in_overlap=it.get("in_overlap", False),
            start=it["start"],
            end=it["end"],
        )
        for it in target["iterations"]
        for sample in parse_iteration(it, raw_dir, parsers.get(ms.parser), metrics)
    ]
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
