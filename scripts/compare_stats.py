"""Compare two results/stats trees table by table: the check that a restructuring changed no
number (issue 34: the ci config's stats before and after, computed from the same raw runs).

  .venv/bin/python scripts/compare_stats.py BEFORE/results/stats AFTER/results/stats

For every .tsv in either tree it prints one line: `same`, `only before` / `only after`, or what
differs — columns added or removed, a different row count, or the columns whose values differ
(numbers compared to a relative 1e-9, text exactly) with the first differing row. Exit 0 when
every table present in both has the same shared columns and values, else 1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def differing_columns(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, int]:
    """Shared column -> index of its first differing row (tables of equal length)."""
    out = {}
    for c in [c for c in a.columns if c in b.columns]:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        nx, ny = pd.to_numeric(a[c], errors="coerce"), pd.to_numeric(b[c], errors="coerce")
        numeric = nx.notna() & ny.notna()
        same_num = np.isclose(nx, ny, rtol=1e-9, atol=0, equal_nan=True)
        same = np.where(numeric, same_num, x == y)
        if not same.all():
            out[c] = int(np.argmin(same))
    return out


def compare(before: Path, after: Path) -> tuple[list[str], bool]:
    lines, ok = [], True
    names = sorted(
        {p.relative_to(before) for p in before.rglob("*.tsv")}
        | {p.relative_to(after) for p in after.rglob("*.tsv")}
    )
    for name in names:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            lines.append(f"{name}: only {'after' if b.exists() else 'before'}")
            continue
        x, y = read(a), read(b)
        notes = []
        if added := [c for c in y.columns if c not in x.columns]:
            notes.append(f"columns added {added}")
        if removed := [c for c in x.columns if c not in y.columns]:
            notes.append(f"columns removed {removed}")
            ok = False
        if len(x) != len(y):
            notes.append(f"rows {len(x)} -> {len(y)}")
            ok = False
        elif diff := differing_columns(x, y):
            ok = False
            c, i = next(iter(diff.items()))
            notes.append(f"values differ in {sorted(diff)} (first: row {i}, {c}: {x[c][i]!r} -> {y[c][i]!r})")
        lines.append(f"{name}: {'; '.join(notes) if notes else 'same'}")
    return lines, ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    lines, ok = compare(args.before, args.after)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
