"""The regression check replayed on real sessions, no runs: each saved session (or results tree)
in the order given is taken as today against every run of two or more sessions before it, and
the check's questions (stats/regression_check.py, Holm's correction: stores/sessions.py) are
counted as it would count them. Nothing changed between the sessions' measuring code, so every
failing question is a false alarm. Then its power on the same data: each cell of the newest
session in turn slowed by --slow (default 1.4), the check run against all the earlier sessions.

  python benchmarks/bench_regression_check.py DIR [DIR ...] [--study pairs] [--slow 1.4]

A DIR is a results tree or an unpacked session or regression artifact: it holds
stats/STUDY/summary.tsv (the cells' means). Give them oldest first."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.stats.regression_check import CELL, regression_rows
from interference.steps.changes import regression_subject
from interference.stores.sessions import failing


def cell_means(root: Path, study: str) -> tuple[dict, dict, list[str]]:
    t = pd.read_csv(root / "stats" / study / "summary.tsv", sep="\t", dtype=str, keep_default_na=False)
    columns = list(t.columns)
    group = [c for c in columns[: columns.index("n")] if c != "host"]
    keys = [tuple(r) for r in t[group].itertuples(index=False, name=None)]
    means = dict(zip(keys, pd.to_numeric(t["mean"], errors="coerce")))
    higher = dict(zip(keys, t["higher_is_better"].str.lower().isin(["true", "1"])))
    return means, higher, group


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", type=Path, nargs="+")
    ap.add_argument("--study", default="pairs")
    ap.add_argument("--slow", type=float, default=1.4)
    ap.add_argument("--threshold", type=float, default=0.05)
    a = ap.parse_args(argv)
    sessions = [cell_means(d, a.study) for d in a.dirs]
    group = sessions[0][2]
    subject = regression_subject(group)

    def check(saved, today, higher):
        rows = regression_rows(saved, today, subject, higher, a.threshold)
        return rows, failing(rows)

    print("today  against              questions  failing  median 95 % half-width (cell / shift)")
    for i in range(2, len(sessions)):
        for start in range(i - 1):
            rows, fail = check([s[0] for s in sessions[start:i]], sessions[i][0], sessions[i][1])
            half = {
                q: statistics.median((r["change_ci_high"] - r["change_ci_low"]) / 2 for r in rows if (r["question"] == CELL) == q)
                for q in (True, False)
            }  # fmt: skip
            print(
                f"{a.dirs[i].name:>6} {','.join(d.name for d in a.dirs[start:i]):<20} {len(rows):>9} "
                f"{len(fail):>8}  {half[True]:.1%} / {half[False]:.1%}"
            )
    if len(sessions) < 3:
        return 0
    saved, (today, higher, _) = [s[0] for s in sessions[:-1]], sessions[-1]
    found = 0
    for key in today:
        slowed = dict(today)
        slowed[key] = today[key] * (1 / a.slow if higher[key] else a.slow)
        _, fail = check(saved, slowed, higher)
        found += any(r["question"] == CELL and r["cell"] == " ".join(map(str, key)) for r in fail)
    print(
        f"power: one cell of {a.dirs[-1].name} made {a.slow - 1:.0%} worse, against the {len(saved)} "
        f"sessions before it: found in {found} of {len(today)} cells ({found / len(today):.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
