"""The advice checked on measured placements (studies/profiling/advice_check.py): per-run totals
and Welch's interval against hand calculations."""

import math

import numpy as np
import pandas as pd
import pytest
from interference.studies.profiling import advice_check
from scipy import stats


def test_welchs_interval_is_the_textbook_formula():
    a, b = [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 8.0]
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 3
    df = (va + vb) ** 2 / (va**2 / 3 + vb**2 / 2)  # Welch-Satterthwaite
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    d, low, high, got_df = advice_check.welch_interval(a, b)
    assert d == pytest.approx(3 - 5) and got_df == pytest.approx(df)
    assert (low, high) == (pytest.approx(-2 - half), pytest.approx(-2 + half))
    assert advice_check.verdict(-3, -1) == "matches" and advice_check.verdict(1, 3) == "reversed"
    assert advice_check.verdict(-1, 1) == "undecided" and advice_check.verdict(np.nan, 1) == "undecided"


def samples(rows):
    cols = [
        "case",
        "target",
        "partner",
        "repetition",
        "metric",
        "value",
        "higher_is_better",
        "in_overlap",
        "status",
    ]
    return pd.DataFrame(rows, columns=cols)


# A (higher is better) baseline 10; B (lower is better) baseline 2. Placement "2-3a" (A shares with
# B, label "B|C" for A) and "3a": runs 1 and 2 each.
ROWS = [
    ("1", "A", "", 1, "m", 10.0, True, True, "ok"),
    ("1", "A", "", 2, "m", 10.0, True, True, "ok"),
    ("1", "B", "", 1, "t", 2.0, False, True, "ok"),
    ("2-3a", "A", "B|C", 1, "m", 8.0, True, True, "ok"),
    ("2-3a", "A", "B|C", 1, "m", 6.0, True, True, "ok"),  # run 1's mean: 7 -> IR -0.3
    ("2-3a", "A", "B|C", 1, "m", 1.0, True, False, "ok"),  # outside the overlap: left out
    ("2-3a", "A", "B|C", 2, "m", 9.0, True, True, "ok"),  # IR -0.1
    ("2-3a", "B", "A|C", 1, "t", 3.0, False, True, "ok"),  # 1 - 3/2 = -0.5
    ("2-3a", "B", "A|C", 2, "t", 2.0, False, True, "ok"),  # 0
    ("2-3a", "B", "A|C", 2, "t", np.nan, False, True, "timeout"),
]


def test_a_runs_total_is_the_sum_of_its_members_slowdowns_against_their_case_1_means():
    totals = advice_check.run_totals(samples(ROWS), "2-3a", {"A": "B|C", "B": "A|C"}, {"A": "m", "B": "t"})
    assert totals.to_dict() == {1: pytest.approx(0.3 + 0.5), 2: pytest.approx(0.1 + 0.0)}


def test_the_recommended_and_the_worst_ranked_measured_placement_are_compared():
    rows = ROWS + [
        ("3a", "A", "B", r, "m", v, True, True, "ok") for r, v in ((1, 9.5), (2, 9.0), (3, 9.5), (4, 9.0))
    ] + [("3a", "B", "A", r, "t", v, False, True, "ok") for r, v in ((1, 2.0), (2, 2.2), (3, 2.1), (4, 2.0))] + [
        ("2-3a", "A", "B|C", 3, "m", 8.0, True, True, "ok"), ("2-3a", "A", "B|C", 4, "m", 9.0, True, True, "ok"),
        ("2-3a", "B", "A|C", 3, "t", 2.2, False, True, "ok"), ("2-3a", "B", "A|C", 4, "t", 2.0, False, True, "ok"),
    ]  # fmt: skip
    advice = pd.DataFrame(
        [
            (1.0, "A | B", "3a", 0.1, 0.0, 0.2),
            (2.0, "A+B | C", "2-3a", 0.5, 0.3, 0.7),
            (3.0, "A+B", "2", 0.9, 0.8, 1.0),
        ],
        columns=["rank", "placement", "case", "total_slowdown", "slowdown_low", "slowdown_high"],
    )
    labels = {"A | B": {"A": "B", "B": "A"}, "A+B | C": {"A": "B|C", "B": "A|C"}, "A+B": {"A": "B", "B": "A"}}
    out = advice_check.check(advice, samples(rows), labels.get, {"A": "m", "B": "t"})
    # "A+B" (Case 2) has no runs: the worst ranked measured is "A+B | C".
    assert list(out.role) == ["recommended", "worst ranked", "recommended − worst ranked"]
    assert list(out.placement[:2]) == ["A | B", "A+B | C"]
    apart = [0.05 + 0.0, 0.1 + 0.1, 0.05 + 0.05, 0.1 + 0.0]  # 3a's runs: A's slowdown + B's
    mixed = [0.3 + 0.5, 0.1 + 0.0, 0.2 + 0.1, 0.1 + 0.0]  # 2-3a's four runs
    d, low, high, _ = advice_check.welch_interval(apart, mixed)
    assert out.difference.iloc[2] == pytest.approx(d) and out.verdict.iloc[2] == advice_check.verdict(
        low, high
    )
    assert out.runs.iloc[0] == 4 and out.measured_total.iloc[0] == pytest.approx(np.mean(apart))
