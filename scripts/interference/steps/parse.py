"""The parser step of every study: one run's raw files -> tidy rows (the study's parse, with the
run's contention telemetry over each row's interval: telemetry_rates.attach), and the union of a study's runs.

  python -m interference.steps.parse META.json OUT.tsv                  one run
  python -m interference.steps.parse --merge OUT.tsv IN.tsv...           the union of runs"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pandas as pd

from interference import studies
from interference.core import records
from interference.core.samples import Sample
from interference.core.table_schema import TableSchema, TableSchemaError
from interference.host import telemetry_rates

log = logging.getLogger("parse")
# The columns every study's samples.tsv has, whatever its identity columns and telemetry: a
# Sample's fields (core/samples.py) and their types, checked by this step, which alone uses it.
SAMPLE_SCHEMA = TableSchema.of_record(Sample)


def parse_run(meta_path: Path) -> pd.DataFrame:
    record = records.load(meta_path)  # any readable version; a bad field stops here, named
    # The study's parser reads the record's current shape (its own fields it types itself).
    meta = record.to_json()
    df = studies.get(record.study).parse(meta, meta_path.parent)
    return telemetry_rates.attach(df, meta, meta_path.parent)


def write(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, sep="\t", index=False, float_format="%.6f")


def merge(inputs: list[Path]) -> pd.DataFrame:
    # Text as written: the study's readers decide the types.
    frames = [pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False) for p in inputs]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    if argv and argv[0] == "--merge":
        out, inputs = Path(argv[1]), [Path(p) for p in argv[2:]]
        df = merge(inputs)
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, sep="\t", index=False)
        log.info("%d rows from %d runs -> %s", len(df), len(inputs), out)
        return 0
    meta, out = Path(argv[0]), Path(argv[1])
    df = parse_run(meta)
    try:
        # A parser that wrote a wrong row stops here, not in a statistics table far downstream.
        SAMPLE_SCHEMA.validate(df, f"samples of {meta}", exact=False)
    except TableSchemaError as e:
        log.error("%s", e)
        return 1
    write(df, out)
    bad = (df["status"] != "ok").sum() if "status" in df else 0
    log.info("%s: %d rows, %d not ok -> %s", meta, len(df), bad, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
