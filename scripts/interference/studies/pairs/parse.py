"""Parse one run's raw artifacts (its meta.json and raw files) into tidy sample rows.

Columns: host, runtime, case, target, partner, repetition, member, iteration, metric, value,
unit, higher_is_better, start, end, in_overlap, status, own_cpu_cores (the CPUs' worth the
member's container used over the iteration, as its loop read them from its cgroup), phase and
block (the paired design's label, phases.py: with, without, mixed; empty without that design). A failed iteration or an unusable
output becomes rows with an empty value and a status saying what went wrong, and a log line
naming the file: never a silent number, never a crash of the whole parse."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from interference import parsers
from interference.core.groups import labels
from interference.core.microservices import registry
from interference.core.samples import OK, output_samples
from interference.studies.pairs.cases import layout
from interference.studies.pairs.records import PairKey, PairResults

COLUMNS = [
    "host",
    "runtime",
    "case",
    "target",
    "partner",
    "repetition",
    "member",
    "iteration",
    "metric",
    "value",
    "unit",
    "higher_is_better",
    "start",
    "end",
    "in_overlap",
    "status",
    "own_cpu_cores",
    "phase",
    "block",
]
log = logging.getLogger("parse")


def parse(meta: dict, raw_dir: Path) -> pd.DataFrame:
    s = meta["settings"]
    where = str(raw_dir / "meta.json")
    run = PairKey.from_settings(s, where)
    results = PairResults.from_json(meta, where)
    ms = registry()
    members = [m.microservice for m in results.members]
    # The others of each member's group (core/groups.py: "S"; "NS+S"; "S|L" in Case 2-3a); the
    # layout lists the members in order.
    partners = labels([[members[k] for k in c] for c in layout(run.case, len(members))])
    rows = []
    for k, member in enumerate(results.members):
        target = ms[member.microservice]
        partner = partners[k]
        parse = parsers.get(target.parser)
        for it in member.iteration_records:
            for sample in output_samples(it.status, it.stdout, it.stderr, raw_dir, parse, target.metrics):
                if sample.status != OK:
                    log.warning("%s: %s", raw_dir / it.stdout, sample.status)
                rows.append(
                    sample.row(
                        host=s["host"],
                        runtime=s["runtime"],
                        # The baseline re-measured at the end (drift.py) is a case of its own.
                        case=run.key_case,
                        target=target.id,
                        partner=partner,
                        repetition=s["repetition"],
                        member=member.member,
                        iteration=it.iteration,
                        start=it.start,
                        end=it.end,
                        in_overlap=it.in_overlap,
                        own_cpu_cores=it.own_cpu_cores,
                        phase=it.phase,
                        block=it.block,
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS)
