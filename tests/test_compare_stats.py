"""scripts/compare_stats.py: two stats trees compared table by table (issue 34's check that the
restructuring changed no number)."""

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import compare_stats  # noqa: E402


def tree(root, tables: dict[str, str]):
    for name, text in tables.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_same_added_columns_and_differences_are_told_apart(tmp_path):
    before = tree(tmp_path / "a", {"pairs/ir.tsv": "k\tir\nx\t0.25\n", "pairs/old.tsv": "k\nx\n",
                                   "pairs/n.tsv": "k\tn\nx\t1\n"})  # fmt: skip
    after = tree(tmp_path / "b", {"pairs/ir.tsv": "k\tir\tnew\nx\t0.2500000000001\t1\n", "pairs/n.tsv": "k\tn\nx\t2\n",
                                  "pairs/new.tsv": "k\nx\n"})  # fmt: skip
    lines, ok = compare_stats.compare(before, after)
    assert lines == [
        "pairs/ir.tsv: columns added ['new']",  # 0.25 within 1e-9: the same number
        "pairs/n.tsv: values differ in ['n'] (first: row 0, n: '1' -> '2')",
        "pairs/new.tsv: only after",
        "pairs/old.tsv: only before",
    ]
    assert not ok
    lines, ok = compare_stats.compare(before, before)
    assert ok and all(line.endswith(": same") for line in lines)
