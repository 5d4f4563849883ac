"""The advice judged against the replicate (advice_score.py), on hand-made validation rows: each
placement's total, the clear comparisons, the ordering accuracy with its Clopper–Pearson
interval, the top-pick regrets and Kendall's τ, all by hand."""

import numpy as np
import pandas as pd
import pytest
from interference.studies.profiling import advice_score
from scipy import stats

METRICS = {"L": "gflops", "Y": "t"}
COLUMNS = ["case", "target", "partner", "metric", "ir_measured", "measured_low", "measured_high",
           "ir_predicted", "ir_replicate"]  # fmt: skip


def rows(half_width=0.02):
    """L+Y in three cases and L+L in two; a CI of ±half_width on every measured IR."""
    data = [
        # case, target, partner, metric, measured, predicted, replicate
        ("2", "L", "Y", "gflops", -0.20, -0.10, -0.15),
        ("2", "Y", "L", "t", -0.50, -0.40, -0.45),
        ("3a", "L", "Y", "gflops", -0.20, -0.20, -0.25),
        ("3a", "Y", "L", "t", -0.20, -0.05, -0.25),
        ("3b", "L", "Y", "gflops", -0.05, 0.0, -0.02),
        ("3b", "Y", "L", "t", -0.05, 0.0, -0.04),
        ("3b", "Y", "L", "other", -0.90, 0.0, -0.9),  # not Y's chosen metric: left out
        ("2", "L", "L", "gflops", -0.20, -0.30, -0.10),
        ("3a", "L", "L", "gflops", -0.21, -0.10, -0.30),
        ("2", "L", "S+Y", "gflops", -0.5, -0.5, -0.5),  # a triple: not a pair set
    ]
    return pd.DataFrame([(c, t, p, m, x, x - half_width, x + half_width, pr, r) for c, t, p, m, x, pr, r in data],
                        columns=COLUMNS)  # fmt: skip


def test_totals_are_minus_the_sum_of_the_members_irs_a_self_pair_twice():
    t = advice_score.placement_totals(rows(), METRICS).set_index(["set", "case"])
    assert t.loc[("L+Y", "2"), "measured"] == pytest.approx(0.70)
    assert t.loc[("L+Y", "2"), "predicted"] == pytest.approx(0.50)
    assert t.loc[("L+Y", "3b"), "replicate"] == pytest.approx(0.06)
    assert t.loc[("L+L", "2"), "measured"] == pytest.approx(0.40) and len(t) == 5
    se = 0.02 / advice_score.Z
    assert t.loc[("L+Y", "2"), "measured_se"] == pytest.approx(np.hypot(se, se))
    assert t.loc[("L+L", "2"), "measured_se"] == pytest.approx(2 * se)  # one row, twice


def test_clear_comparisons_accuracy_regret_and_tau_by_hand():
    scored = advice_score.score(rows(), METRICS, "model").set_index(["predictor", "measure"])
    # Measured totals: L+Y 2: 0.70, 3a: 0.40, 3b: 0.10; L+L 2: 0.40, 3a: 0.42 (not clear: 0.02
    # against an SE of 2·(0.02/1.96)·√2). Clear: L+Y's three comparisons. The model's totals
    # 0.50, 0.25, 0.0 order all three as measured; so do the replicate's 0.60, 0.50, 0.06.
    acc = scored.loc[("model", "ordering_accuracy")]
    assert acc.value == 1 and acc.n == 3
    assert acc.ci_low == pytest.approx(0.025 ** (1 / 3))  # Clopper–Pearson: 3 of 3
    # Regret: L+Y both pick 3b (the best); L+L: the model picks 3a (0.20 < 0.60), measured 0.42
    # against the best 0.40: regret 0.02. The replicate picks 2 (0.20 < 0.60): 0. The rule: 3b
    # for L+Y (0), none for L+L (no 3b measured): left out.
    assert scored.loc[("model", "top_pick_regret")].value == pytest.approx(0.01)
    assert scored.loc[("replicate", "top_pick_regret")].value == pytest.approx(0.0)
    rule = scored.loc[("one_line_rule", "top_pick_regret")]
    assert rule.value == pytest.approx(0.0) and rule.n == 1
    # Kendall's τ-b over the five placements, by hand: measured 0.70, 0.40, 0.10, 0.40, 0.42;
    # model 0.50, 0.25, 0.00, 0.60, 0.20.
    m = np.array([0.70, 0.40, 0.10, 0.40, 0.42])
    p = np.array([0.50, 0.25, 0.00, 0.60, 0.20])
    concordant = discordant = ties_m = 0
    for i in range(5):
        for j in range(i + 1, 5):
            s = np.sign(m[i] - m[j]) * np.sign(p[i] - p[j])
            concordant += s > 0
            discordant += s < 0
            ties_m += m[i] == m[j]
    tau_b = (concordant - discordant) / np.sqrt((10 - ties_m) * 10)
    assert scored.loc[("model", "kendall_tau")].value == pytest.approx(tau_b)
    assert tau_b == pytest.approx(stats.kendalltau(m, p).statistic)


def test_wide_intervals_leave_no_clear_comparison():
    scored = advice_score.score(rows(half_width=0.5), METRICS).set_index(["predictor", "measure"])
    acc = scored.loc[("profile", "ordering_accuracy")]
    assert acc.n == 0 and np.isnan(acc.value) and "0 of 0" in acc.note


def triple_rows():
    """L+S+Y in Case 2, 3a and 2-3a with each member apart: IRs chosen so that each placement's
    total is a round number (S's chosen metric: copy)."""
    data = [
        # case, target, partner, measured, predicted, replicate
        ("2", "L", "S+Y", -0.10, -0.10, -0.10), ("2", "S", "L+Y", -0.20, -0.30, -0.20), ("2", "Y", "L+S", -0.30, -0.30, -0.30),
        ("3a", "L", "S+Y", -0.05, -0.05, -0.05), ("3a", "S", "L+Y", -0.40, 0.20, -0.35), ("3a", "Y", "L+S", -0.05, -0.05, -0.05),
        # L apart: L's label has no "|"; the two sharing write the one apart after it.
        ("2-3a", "L", "S+Y", 0.0, 0.0, 0.0), ("2-3a", "S", "Y|L", -0.10, -0.10, -0.10), ("2-3a", "Y", "S|L", -0.10, -0.10, -0.10),
        ("2-3a", "S", "L+Y", -0.60, 0.0, -0.50), ("2-3a", "L", "Y|S", 0.0, 0.0, 0.0), ("2-3a", "Y", "L|S", 0.0, 0.0, 0.0),
    ]  # fmt: skip
    metric = {"L": "gflops", "S": "copy", "Y": "t"}
    return pd.DataFrame([(c, t, p, metric[t], x, x - 0.01, x + 0.01, pr, r) for c, t, p, x, pr, r in data],
                        columns=COLUMNS)  # fmt: skip


def test_a_triples_placements_are_its_cases_and_who_is_apart_and_the_rule_keeps_them_apart():
    metrics = {"L": "gflops", "S": "copy", "Y": "t"}
    t = advice_score.placement_totals(triple_rows(), metrics).set_index(["set", "case"])
    assert set(t.index) == {
        ("L+S+Y", "2"),
        ("L+S+Y", "3a"),
        ("L+S+Y", "2-3a (L apart)"),
        ("L+S+Y", "2-3a (S apart)"),
    }
    assert t.loc[("L+S+Y", "2"), "measured"] == pytest.approx(0.60)
    assert t.loc[("L+S+Y", "3a"), "measured"] == pytest.approx(0.50)
    assert t.loc[("L+S+Y", "2-3a (L apart)"), "measured"] == pytest.approx(0.20)
    assert t.loc[("L+S+Y", "2-3a (S apart)"), "measured"] == pytest.approx(0.60)
    assert t.loc[("L+S+Y", "3a"), "predicted"] == pytest.approx(-0.10)
    se = 0.01 / advice_score.Z
    assert t.loc[("L+S+Y", "2"), "measured_se"] == pytest.approx(np.sqrt(3) * se)
    scored = advice_score.score(triple_rows(), metrics, "model").set_index(["predictor", "measure"])
    # The model picks 3a (total -0.10), measured 0.50 against the best 0.20: regret 0.30. The
    # replicate picks L apart (0.20): 0. Two cores hold no three limited containers: the rule
    # keeps them apart unlimited (3a): 0.30.
    assert scored.loc[("model", "top_pick_regret")].value == pytest.approx(0.30)
    assert scored.loc[("replicate", "top_pick_regret")].value == pytest.approx(0.0)
    assert scored.loc[("one_line_rule", "top_pick_regret")].value == pytest.approx(0.30)
    # Clear (SE about 0.009 a total): every two placements but 2 against S apart (both 0.60).
    assert scored.loc[("model", "ordering_accuracy")].n == 5
