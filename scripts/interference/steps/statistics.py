"""The statistics step of every study: one table of results/stats/<study>/, as the study
declares it (Study.tables: the function and the inputs it needs).

  python -m interference.steps.statistics --study S --table T --input samples=P [--input NAME=P ...]
      --out results/stats/S/T.tsv [--jobs N]"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import pandas as pd

from interference import studies
from interference.core.table_schema import TableSchemaError

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--input", action="append", default=[], help="NAME=PATH: samples or another table")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=1, help="processes (results do not depend on it)")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    study = studies.get(a.study)
    inputs = {name: Path(path) for name, path in (item.split("=", 1) for item in a.input)}
    t0 = time.perf_counter()
    df = study.compute_table(a.table, inputs, max(1, a.jobs))
    try:
        write(checked(study, a.table, df), a.out)
    except TableSchemaError as e:
        log.error("%s", e)
        return 1
    log.info("%s/%s: %d rows in %.2f s -> %s", a.study, a.table, len(df), time.perf_counter() - t0, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
