"""The statistics step of every study: the tables of results/stats/<study>/, as the study
declares them (Study.tables: each one's function and the inputs it needs).

  python -m interference.steps.statistics --study S --samples P --out-dir results/stats/S [--jobs N]
      every table of S, each after the tables it needs (what the workflow runs: one process per
      study, as importing scipy and statsmodels costs more than most tables take to compute)
  python -m interference.steps.statistics --study S --table T --input samples=P [--input NAME=P ...]
      --out results/stats/S/T.tsv [--jobs N]
      one table (by hand, and in the tests)"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pandas as pd

from interference import studies
from interference.core.table_schema import TableSchemaError
from interference.studies.base import WORKFLOW_TABLES

log = logging.getLogger("statistics")


def write(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # %.10g keeps small p-values (1e-30) that a fixed-point format would round to 0.
    df.to_csv(path, sep="\t", index=False, float_format="%.10g")


def checked(study, table: str, df: pd.DataFrame) -> pd.DataFrame:
    """The table as computed, after checking it against the columns its study declares for it
    (a table without a declaration passes): a wrong table stops here, naming the table and
    the column, rather than in a reader far downstream. Nothing is coerced or reordered."""
    schema = study.tables[table].schema
    if schema is not None:
        schema.validate(df, f"{study.name}/{table}")
    return df


def in_order(study) -> list[str]:
    """The study's tables, each after the tables it needs (a table needing itself or a table
    that is not the study's is a mistake in the study's declaration)."""
    done: list[str] = []
    pending = dict(study.tables)
    while pending:
        ready = [
            n
            for n, t in pending.items()
            if all(x == "samples" or x in done or x in WORKFLOW_TABLES for x in t.needs)
        ]
        if not ready:
            raise ValueError(f"{study.name}: tables whose needs cannot be met: {sorted(pending)}")
        for name in ready:
            done.append(name)
            del pending[name]
    return done


def one_table(study, table: str, inputs: dict[str, Path], out: Path, jobs: int) -> bool:
    t0 = time.perf_counter()
    df = study.compute_table(table, inputs, max(1, jobs))
    try:
        write(checked(study, table, df), out)
    except TableSchemaError as e:
        log.error("%s", e)
        return False
    log.info("%s/%s: %d rows in %.2f s -> %s", study.name, table, len(df), time.perf_counter() - t0, out)
    return True


def every_table(study, samples: Path, out_dir: Path, jobs: int) -> bool:
    """Every table of the study into out_dir; stops at the first that fails its declaration, as
    the tables after it may read it."""
    for table in in_order(study):
        inputs = {n: samples if n == "samples" else out_dir / f"{n}.tsv" for n in study.tables[table].needs}
        if not one_table(study, table, inputs, out_dir / f"{table}.tsv", jobs):
            return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", required=True)
    ap.add_argument("--samples", type=Path, help="every table: the study's samples.tsv")
    ap.add_argument("--out-dir", type=Path, help="every table: where they go")
    ap.add_argument("--table", help="one table")
    ap.add_argument(
        "--input", action="append", default=[], help="one table: NAME=PATH, samples or another table"
    )
    ap.add_argument("--out", type=Path, help="one table: its path")
    ap.add_argument("--jobs", type=int, default=1, help="processes (results do not depend on it)")
    a = ap.parse_args(argv)
    if (a.table is None) == (a.out_dir is None) or (a.table and not a.out) or (a.out_dir and not a.samples):
        ap.error("give either --samples and --out-dir (every table) or --table, --input and --out (one)")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    study = studies.get(a.study)
    if a.table is None:
        return 0 if every_table(study, a.samples, a.out_dir, a.jobs) else 1
    inputs = {name: Path(path) for name, path in (item.split("=", 1) for item in a.input)}
    return 0 if one_table(study, a.table, inputs, a.out, a.jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
