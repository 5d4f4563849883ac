"""The two tables of a study's runs, made from their meta.json files only (never the raw
outputs):

  runs.tsv         one row per run: which run it is (RUN_IDENTITY), when it ran, iterations and
                   failures, events, and the study's own columns (Study.run_row)
  run_members.tsv  one row per member of a run: which run, which member (RUN_MEMBER: member,
                   role, microservice) and the study's facts about it (Study.member_rows, its
                   columns Study.member_schema); no rows for a study whose runs have no members

  python -m interference.steps.run_tables --study S --metas M... --runs results/stats/S/runs.tsv \\
      --members results/stats/S/run_members.tsv"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from interference import studies
from interference.core import records
from interference.core.records import RunRecord
from interference.core.table_schema import INTEGER, RUN_IDENTITY, RUN_MEMBER, TableSchema, TableSchemaError

# Both tables' rows in the order of their runs: by identity, the run's id aside.
RUN_ORDER = [c for c in RUN_IDENTITY.columns if c != "run_id"]
# The whole-number columns of runs.tsv, the generic ones and the pair study's (window_s only
# where every run's is whole: a phased run's window is its phases', in tenths of a second).
WHOLE_NUMBERS = ("n_iterations", "n_failed", "repetition", "iterations_requested", "window_s", "n_in_overlap",
                 "iteration_timeout_s")  # fmt: skip


def identity(record: RunRecord) -> dict:
    """The run's RUN_IDENTITY columns, the first of both tables (the key joining them)."""
    run = record.identity
    values = (run.host, run.runtime, record.study, run.key, run.repetition, record.run_id)
    return dict(zip(RUN_IDENTITY.columns, values, strict=True))


def run_row(meta_path: Path) -> dict:
    """The generic columns of one run, then the study's own (Study.run_row)."""
    record = records.load(meta_path)
    study = studies.get(record.study)
    row = {
        **identity(record),
        "started": record.started,
        "finished": record.finished,
        "duration_s": (record.finished - record.started) if record.finished else None,
        "n_iterations": record.n_iterations,
        "n_failed": record.n_failed,
        "loadavg_1m_before": (record.host_info.get("loadavg_before") or [None])[0],
        # The contention sampler's interval as the run used it (none: no telemetry).
        "telemetry_interval_s": (record.telemetry or {}).get("interval_s"),
        "events": " | ".join(record.events),
        # Measured after every other run of its study (core/run_order.py leaves it out of the draw).
        "after_all": study.after_all(record.identity.key),
        "meta": str(meta_path),
    }
    row.update(study.run_row(record.to_json()))
    return row


def runs_table(metas: list[Path]) -> pd.DataFrame:
    rows = [run_row(p) for p in metas]
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df.sort_values(RUN_ORDER)
    # Whole numbers stay whole where some runs have none (pandas would make them floats).
    for c in WHOLE_NUMBERS:
        if c in df:
            v = pd.to_numeric(df[c], errors="coerce")
            df[c] = v.astype("Int64") if (v.dropna() % 1 == 0).all() else v
    return df.reset_index(drop=True)


def member_schema(study: str) -> TableSchema:
    """The columns of a study's run_members.tsv (RUN_MEMBER's alone for one without members)."""
    return studies.get(study).member_schema or RUN_MEMBER


def members_table(metas: list[Path], study: str) -> pd.DataFrame:
    """One row per member of each run of `study`, in the order of runs.tsv, then by member.
    Checked against member_schema(study) before anything is made of it (TableSchemaError names
    the column); a run of another study is refused (ValueError)."""
    kind, schema = studies.get(study), member_schema(study)
    rows = []
    for path in metas:
        record = records.load(path)
        if record.study != study:
            raise ValueError(f"{path} is a run of study {record.study!r}, not of {study!r}")
        rows += [identity(record) | member for member in kind.member_rows(record.to_json())]
    df = pd.DataFrame(rows) if rows else pd.DataFrame(columns=schema.columns)
    schema.validate(df, f"{study}/run_members")
    df = df.sort_values([*RUN_ORDER, "member"], kind="stable")
    # Whole numbers stay whole where some members have none (pandas would make them floats).
    for c in schema.of(INTEGER):
        df[c] = df[c].astype("Int64")
    return df.reset_index(drop=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m interference.steps.run_tables", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--study", required=True, help="the study whose runs --metas are")
    ap.add_argument("--metas", nargs="*", type=Path, default=[], help="the study's runs' meta.json")
    ap.add_argument("--runs", type=Path, help="runs.tsv to write")
    ap.add_argument("--members", type=Path, help="run_members.tsv to write")
    a = ap.parse_args(argv)
    if a.members:
        try:
            members = members_table(a.metas, a.study)
        except TableSchemaError as e:
            print(e, file=sys.stderr)
            return 1
        a.members.parent.mkdir(parents=True, exist_ok=True)
        members.to_csv(a.members, sep="\t", index=False, float_format="%.6f")
        print(f"{len(members)} members of runs -> {a.members}")
    if a.runs:
        runs = runs_table(a.metas)
        a.runs.parent.mkdir(parents=True, exist_ok=True)
        runs.to_csv(a.runs, sep="\t", index=False, float_format="%.6f")
        print(f"{len(runs)} runs -> {a.runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
