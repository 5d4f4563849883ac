"""The papers' placement questions asked of their IRs and ours (statistics/placement_questions.py),
by hand on a few rows of published.tsv: the pair section only counts these tables' rows."""

import pandas as pd
from interference.studies.pairs.statistics.placement_questions import (
    case_contrasts_table,
    worst_placements_table,
)


def published(rows):
    keys = ("case", "target", "partner", "paper_ir", "ir")
    return pd.DataFrame([
        {"comparison": "ir", "paper": "000", "host": "h", "runtime": "docker", "metric": "gflops", **dict(zip(keys, r))}
        for r in rows
    ] + [{"comparison": "mean", "paper": "000", "host": "h", "runtime": "docker", "metric": "gflops",
          "case": "2", "target": "L", "partner": "S", "paper_ir": None, "ir": None}])  # fmt: skip


ROWS = [
    ("2", "L", "S", -0.20, -0.10),  # 2 against 3a: the papers -0.15, ours -0.05: both have Case 2 worse
    ("3a", "L", "S", -0.05, -0.05),
    ("2", "L", "Y", -0.30, -0.05),  # the papers -0.01 (under 0.02: neither), ours +0.10: they disagree
    ("3a", "L", "Y", -0.29, -0.15),
    ("3b", "L", "S", -0.10, -0.30),  # 3b against 3a: the papers -0.05 and ours -0.25, both 3b worse
]


def test_case_contrasts_by_hand():
    t = case_contrasts_table(published(ROWS)).set_index(["case", "against", "partner"])
    ls, ly, lim = t.loc[("2", "3a", "S")], t.loc[("2", "3a", "Y")], t.loc[("3b", "3a", "S")]
    assert (ls["paper_worse"], ls["worse"], ls["agrees"]) == (True, True, True)
    assert ls["paper_difference"] == -0.20 - -0.05 and ls["difference"] == -0.10 - -0.05
    assert (ly["paper_worse"], ly["worse"], ly["agrees"]) == (False, False, False)
    assert (lim["paper_worse"], lim["worse"], lim["agrees"]) == (True, True, True)
    assert len(t) == 3  # no 3b row for Y: a contrast needs both of its cases


def test_worst_placements_by_hand():
    [row] = worst_placements_table(published(ROWS)).to_dict("records")
    assert row["combinations"] == 5
    assert (row["paper_case"], row["paper_partner"], row["paper_ir"]) == ("2", "Y", -0.30)
    assert (row["case"], row["partner"], row["ir"]) == ("3b", "S", -0.30) and not row["same"]
    # One combination alone has no worst to compare.
    assert worst_placements_table(published(ROWS[:1])).empty
