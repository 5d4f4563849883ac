"""Issue 35's placement predictor (studies/profiling/): every routine against a hand calculation on
tiny synthetic profile and interference tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from interference.studies.profiling import predict

EXACT = 0.0  # a CI of zero width: the input is exact, so the interval collapses to the point


def sensitivity_rows(ms, curves, placements=("2", "3a"), metric="m", half_width=EXACT, runs=2):
    """curves: resource -> [(intensity, degradation), ...], the same in every placement."""
    return [
        {
            "microservice": ms, "placement": pl, "resource": resource, "intensity": x, "metric": metric,
            "degradation": d, "ci_low": d - half_width, "ci_high": d + half_width, "runs": runs,
        }
        for pl in placements
        for resource, points in curves.items()
        for x, d in points
    ]  # fmt: skip


def pressure_rows(ms, pressures, placements=("2", "3a"), half_width=EXACT):
    """pressures: resource -> bubble size, ± half_width; the resources not named press with 0."""
    widths = {r: (0.0, EXACT) for r in predict.RESOURCES} | {r: (p, half_width) for r, p in pressures.items()}
    return [
        {"microservice": ms, "placement": pl, "resource": r, "pressure": p, "ci_low": p - w, "ci_high": p + w}
        for pl in placements
        for r, (p, w) in widths.items()
    ]


def limit_rows(effects, metric="m", half_width=EXACT):
    return [
        {
            "microservice": ms,
            "metric": metric,
            "effect": e,
            "ci_low": e - half_width,
            "ci_high": e + half_width,
        }
        for ms, e in effects.items()
    ]


def profiles(sensitivity, pressure, limits, **options):
    return predict.Profiles(
        pd.DataFrame(sensitivity), pd.DataFrame(pressure), pd.DataFrame(limits), **options
    )


# A: hurt by cpu and memory; B and C press on both. Every input exact unless a test says otherwise.
CURVES_A = {"cpu": [(1, -0.2), (2, -0.5)], "memory": [(1, -0.1), (2, -0.3), (4, -0.4)], "disk": [(1, 0.0)], "network": [(1, 0.0)]}  # fmt: skip
QUIET = {"cpu": [(1, 0.0)], "memory": [(1, 0.0)], "disk": [(1, 0.0)], "network": [(1, 0.0)]}


def abc_profiles(**options):
    sens = sensitivity_rows("A", CURVES_A) + sensitivity_rows("B", QUIET) + sensitivity_rows("C", QUIET)
    press = (
        pressure_rows("A", {"cpu": 1, "memory": 1, "disk": 0, "network": 0})
        + pressure_rows("B", {"cpu": 1, "memory": 1, "disk": 0, "network": 0})
        + pressure_rows("C", {"cpu": 0.5, "memory": 2, "disk": 0, "network": 0})
    )
    return profiles(sens, press, limit_rows({"A": 0.1, "B": 0.0, "C": 0.0}), **options)


# --- predict.py -----------------------------------------------------------------------------


def test_interpolation_is_piecewise_linear_through_zero_and_clipped():
    x, point, _ = abc_profiles().curve("A", "2", "memory", "m")
    assert list(x) == [0, 1, 2, 4]  # the (0, 0) anchor: no bubble is the target alone
    # Half-way to intensity 1: -0.1 / 2; between 2 and 4 at 3: (-0.3 - 0.4) / 2; past 4: held.
    assert predict.interpolate(x, point, 0.5)[0] == pytest.approx(-0.05)
    assert predict.interpolate(x, point, 3)[0] == pytest.approx(-0.35)
    assert predict.interpolate(x, point, 10)[0] == pytest.approx(-0.4)


def test_the_curve_is_made_monotone_by_pooling_adjacent_means_by_their_runs():
    # -0.05 after -0.1 rises: pooled with weights 1 and 3 -> (-0.1 - 3 * 0.05) / 4 = -0.0625;
    # -0.2 after -0.3 rises: pooled equally -> -0.25.
    fit = predict.monotone_nonincreasing(np.array([-0.1, -0.05, -0.3, -0.2]), np.array([1, 3, 1, 1]))
    assert fit == pytest.approx([-0.0625, -0.0625, -0.25, -0.25])
    # An improvement beside a small bubble is noise: the curve may not rise above the alone point.
    sens = sensitivity_rows("A", {"memory": [(1, 0.02), (2, -0.1)]})
    _, point, _ = profiles(sens, [], []).curve("A", "2", "memory", "m")
    assert list(point) == pytest.approx([0, 0, -0.1])


def test_case_2_multiplies_the_limit_effect_and_each_resource():
    # A beside B in one container: cpu pressure 1 -> -0.2, memory 1 -> -0.1, limit +0.1.
    p = predict.predict_member(abc_profiles(), "A", "m", together=["B"])
    assert p.ir == pytest.approx(1.1 * 0.8 * 0.9 - 1)  # -0.208, not the sum's -0.2
    assert (p.low, p.high) == pytest.approx((p.ir, p.ir))  # exact inputs: no width


def test_pressures_of_a_triple_add_on_each_resource():
    # A beside B and C: cpu 1 + 0.5 = 1.5 -> -0.35; memory 1 + 2 = 3 -> -0.35.
    rows = predict.predict_group(abc_profiles(), "2", ["A", "B", "C"])
    a = next(r for r in rows if r["target"] == "A")
    assert a["partner"] == "B+C"
    assert a["ir"] == pytest.approx(1.1 * 0.65 * 0.65 - 1)


def test_case_3b_drops_cpu_and_the_limit_effect():
    rows = {
        (r["case"], r["target"]): r
        for c in predict.CASES
        for r in predict.predict_group(abc_profiles(), c, ["A", "B"])
    }
    assert rows["3a", "A"]["ir"] == pytest.approx(1.1 * 0.8 * 0.9 - 1)
    assert rows["3b", "A"]["ir"] == pytest.approx(0.9 - 1)  # memory only
    assert rows["3b", "B"]["ir"] == pytest.approx(0.0)


def test_a_self_pair_is_one_row_per_case_and_metric():
    table = predict.predict_all(abc_profiles(), ["A", "B"])
    assert len(table) == 3 * (1 + 2 + 1)  # AA, AB (both members), BB in 3 cases
    assert set(table.partner[table.target == "A"]) == {"A", "B"}


def test_a_missing_input_leaves_the_prediction_empty_and_says_why():
    sens = sensitivity_rows("A", {"cpu": [(1, -0.2)]})
    p = predict.predict_member(profiles(sens, pressure_rows("B", {"cpu": 1}), []), "A", "m", together=["B"])
    assert np.isnan(p.ir) and p.reason == "no limit effect of A (m)"
    p = predict.predict_member(
        profiles(sens, pressure_rows("B", {"memory": 1}), []), "A", "m", apart=["B"], limited=True
    )
    assert np.isnan(p.ir) and p.reason == "no memory sensitivity of A (m) in placement 3a"
    p = predict.predict_member(profiles(sens, [], []), "A", "m", apart=["B"], limited=True)
    assert np.isnan(p.ir) and "no memory pressure of B in placement 3a" in p.reason


def test_the_interval_propagates_the_inputs_cis_and_is_reproducible():
    # Linear stretch: memory curve -0.1 per unit up to 4, pressure 2 ± 0.5 (95 %), nothing else:
    # IR = -0.1 * P, so its 95 % interval is -0.1 * (2 ± 0.5) = [-0.25, -0.15].
    sens = sensitivity_rows("A", {"memory": [(4, -0.4)]})
    press = pressure_rows("B", {"memory": 2}, half_width=0.5)
    p = predict.predict_member(profiles(sens, press, [], n_draws=20000), "A", "m", apart=["B"], limited=True)
    assert p.ir == pytest.approx(-0.2)
    assert (p.low, p.high) == pytest.approx((-0.25, -0.15), abs=0.004)
    again = predict.predict_member(
        profiles(sens, press, [], n_draws=20000), "A", "m", apart=["B"], limited=True
    )
    assert np.array_equal(p.draws, again.draws)
    other = predict.predict_member(
        profiles(sens, press, [], n_draws=20000, seed=7), "A", "m", apart=["B"], limited=True
    )
    assert not np.array_equal(p.draws, other.draws)
