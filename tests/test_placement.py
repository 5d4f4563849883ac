"""Issue 35's placement predictor (studies/profiling/): every routine against a hand calculation on
tiny synthetic profile and interference tables."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from interference.studies.profiling import advise, predict, profiles, validate
from scipy import stats

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


def profiles_of(sensitivity, pressure, limits, **options):
    return profiles.Profiles(
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
    return profiles_of(sens, press, limit_rows({"A": 0.1, "B": 0.0, "C": 0.0}), **options)


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
    fit = profiles.monotone_nonincreasing(np.array([-0.1, -0.05, -0.3, -0.2]), np.array([1, 3, 1, 1]))
    assert fit == pytest.approx([-0.0625, -0.0625, -0.25, -0.25])
    # An improvement beside a small bubble is noise: the curve may not rise above the alone point.
    sens = sensitivity_rows("A", {"memory": [(1, 0.02), (2, -0.1)]})
    _, point, _ = profiles_of(sens, [], []).curve("A", "2", "memory", "m")
    assert list(point) == pytest.approx([0, 0, -0.1])


def test_the_tables_are_read_from_tsv_with_placements_as_names_and_one_row_per_input(tmp_path):
    sens = pd.DataFrame(sensitivity_rows("A", CURVES_A))
    paths = [tmp_path / n for n in ("sensitivity.tsv", "pressure.tsv", "limit_effect.tsv")]
    for table, path in zip(
        [sens, pd.DataFrame(pressure_rows("B", {"cpu": 1})), pd.DataFrame(limit_rows({"A": 0.1}))], paths
    ):
        table.to_csv(path, sep="\t", index=False)
    read = profiles.Profiles.read(*paths)
    assert set(read.sensitivity.placement) == {"2", "3a"} and read.pressure_of("B", "2", "cpu")[0] == 1
    with pytest.raises(ValueError, match="more than one row"):
        profiles.Profiles(pd.concat([sens, sens.head(1)]), read.pressure, read.limit_effect)
    with pytest.raises(ValueError, match="lacks the columns runs"):
        profiles.Profiles(sens.drop(columns="runs"), read.pressure, read.limit_effect)


def test_case_2_multiplies_the_limit_effect_by_the_dominant_resource():
    # A beside B in one container: cpu pressure 1 -> -0.2, memory 1 -> -0.1, limit +0.1.
    p = predict.predict_member(abc_profiles(), "A", "m", together=["B"])
    assert p.ir == pytest.approx(1.1 * 0.8 - 1)  # the cpu's -0.2 limits; memory's -0.1 is not added
    assert (p.low, p.high) == pytest.approx((p.ir, p.ir))  # exact inputs: no width
    # The first model multiplied every resource's term: -0.208, not the sum's -0.2.
    first = predict.predict_member(abc_profiles(), "A", "m", together=["B"], rule="product")
    assert first.ir == pytest.approx(1.1 * 0.8 * 0.9 - 1)


def test_the_dominant_resource_is_chosen_at_the_central_values_and_a_rule_must_be_known():
    # Two resources: central -0.1 and -0.2 -> the second, with its own draws (even where a draw
    # of the first is larger: the interval stays centred on the point).
    point, draws = predict.resource_term(
        [-0.1, -0.2], [np.array([-0.1, -0.4]), np.array([-0.2, -0.25])], "dominant"
    )
    assert point == pytest.approx(-0.2) and draws == pytest.approx([-0.2, -0.25])
    assert predict.resource_term([-0.1, 0.25], [-0.1, 0.25], "dominant")[0] == pytest.approx(
        0.25
    )  # a gain too
    point, draws = predict.resource_term([-0.1, -0.2], [np.array([-0.1]), np.array([-0.2])], "product")
    assert point == pytest.approx(0.9 * 0.8 - 1) and draws == pytest.approx([0.9 * 0.8 - 1])
    assert predict.resource_term([], [], "dominant")[0] == 0.0
    with pytest.raises(ValueError, match="unknown combination rule 'sum'"):
        predict.resource_term([-0.1], [-0.1], "sum")


def test_pressures_of_a_triple_add_on_each_resource():
    # A beside B and C: cpu 1 + 0.5 = 1.5 -> -0.35; memory 1 + 2 = 3 -> -0.35.
    rows = predict.predict_group(abc_profiles(), "2", ["A", "B", "C"])
    a = next(r for r in rows if r["target"] == "A")
    assert a["partner"] == "B+C"
    assert a["ir"] == pytest.approx(1.1 * 0.65 - 1)
    first = predict.predict_group(abc_profiles(), "2", ["A", "B", "C"], rule="product")
    assert next(r for r in first if r["target"] == "A")["ir"] == pytest.approx(1.1 * 0.65 * 0.65 - 1)


def test_case_3b_drops_cpu_and_the_limit_effect():
    rows = {
        (r["case"], r["target"]): r
        for c in predict.CASES
        for r in predict.predict_group(abc_profiles(), c, ["A", "B"])
    }
    assert rows["3a", "A"]["ir"] == pytest.approx(1.1 * 0.8 - 1)
    assert rows["3b", "A"]["ir"] == pytest.approx(0.9 - 1)  # memory only
    assert rows["3b", "B"]["ir"] == pytest.approx(0.0)


def test_a_self_pair_is_one_row_per_case_and_metric():
    table = predict.predict_all(abc_profiles(), ["A", "B"])
    assert len(table) == 3 * (1 + 2 + 1)  # AA, AB (both members), BB in 3 cases
    assert set(table.partner[table.target == "A"]) == {"A", "B"}


def test_a_missing_input_leaves_the_prediction_empty_and_says_why():
    sens = sensitivity_rows("A", {"cpu": [(1, -0.2)]})
    p = predict.predict_member(
        profiles_of(sens, pressure_rows("B", {"cpu": 1}), []), "A", "m", together=["B"]
    )
    assert np.isnan(p.ir) and p.reason == "no limit effect of A (m)"
    p = predict.predict_member(
        profiles_of(sens, pressure_rows("B", {"memory": 1}), []), "A", "m", apart=["B"], limited=True
    )
    assert np.isnan(p.ir) and p.reason == "no memory sensitivity of A (m) in placement 3a"
    p = predict.predict_member(profiles_of(sens, [], []), "A", "m", apart=["B"], limited=True)
    assert np.isnan(p.ir) and "no memory pressure of B in placement 3a" in p.reason


def test_the_interval_propagates_the_inputs_cis_and_is_reproducible():
    # Linear stretch: memory curve -0.1 per unit up to 4, pressure 2 ± 0.5 (95 %), nothing else:
    # IR = -0.1 * P, so its 95 % interval is -0.1 * (2 ± 0.5) = [-0.25, -0.15].
    sens = sensitivity_rows("A", {"memory": [(4, -0.4)]})
    press = pressure_rows("B", {"memory": 2}, half_width=0.5)
    p = predict.predict_member(
        profiles_of(sens, press, [], n_draws=20000), "A", "m", apart=["B"], limited=True
    )
    assert p.ir == pytest.approx(-0.2)
    assert (p.low, p.high) == pytest.approx((-0.25, -0.15), abs=0.004)
    again = predict.predict_member(
        profiles_of(sens, press, [], n_draws=20000), "A", "m", apart=["B"], limited=True
    )
    assert np.array_equal(p.draws, again.draws)
    other = predict.predict_member(
        profiles_of(sens, press, [], n_draws=20000, seed=7), "A", "m", apart=["B"], limited=True
    )
    assert not np.array_equal(p.draws, other.draws)


# --- validate.py ----------------------------------------------------------------------------

# (case, target, partner, metric, measured IR, predicted IR, predicted interval)
PAIRS = [
    ("2", "A", "B", "m", -0.20, -0.15, (-0.18, -0.12)),  # outside: a failure
    ("2", "A", "B", "m2", -0.30, -0.25, (-0.35, -0.20)),  # the same unit, a second metric
    ("2", "B", "A", "m", -0.10, -0.12, (-0.20, -0.05)),
    ("2", "A", "A", "m", -0.02, 0.01, (-0.02, 0.04)),  # on the bound: inside; |IR| < 5 %: no sign
    ("3a", "A", "B", "m", -0.06, -0.03, (-0.05, 0.0)),  # outside
    ("3a", "B", "A", "m", 0.08, -0.01, (-0.03, 0.01)),  # outside, wrong sign
    ("3a", "B", "B", "m", 0.00, np.nan, (np.nan, np.nan)),  # measured, not predicted
]


def measured_table():
    rows = [
        {"host": "h", "runtime": "docker", "case": c, "target": t, "partner": p, "metric": k,
         "ir": m, "ir_ci_low": m - 0.01, "ir_ci_high": m + 0.01, "runs": 2}
        for c, t, p, k, m, *_ in PAIRS
    ]  # fmt: skip
    # Another runtime and a case-1 row must not enter.
    rows.append(rows[0] | {"runtime": "podman", "ir": 9.0})
    return pd.DataFrame(rows)


def predicted_table():
    return pd.DataFrame(
        [
            (c, t, p, k, ir, lo, hi, "" if np.isfinite(ir) else "no memory pressure")
            for c, t, p, k, _, ir, (lo, hi) in PAIRS
        ],
        columns=predict.PREDICTION_COLUMNS,
    )


def validation():
    return validate.validation_rows(predicted_table(), measured_table(), runtime="docker")


def test_validation_rows_join_measured_and_predicted_and_refuse_two_runtimes():
    rows = validation().set_index(validate.KEY)
    assert len(rows) == 7
    assert rows.loc[("2", "A", "B", "m"), "error_pp"] == pytest.approx(5.0)
    assert list(rows.inside_interval) == [True, False, True, True, False, False, False]  # sorted by key
    assert rows.loc[("3a", "B", "B", "m"), "reason"] == "no memory pressure"
    with pytest.raises(ValueError, match="several hosts or runtimes"):
        validate.validation_rows(predicted_table(), measured_table())


def test_the_first_model_is_scored_beside_the_model_when_given():
    first = predicted_table().assign(ir=lambda t: t.ir - 0.1)  # every prediction 10 points lower
    rows = validate.validation_rows(predicted_table(), measured_table(), runtime="docker", first=first)
    assert (rows.ir_product - rows.ir_predicted).dropna().to_numpy() == pytest.approx(-0.1)
    table = validate.summary(rows, n_resamples=300).set_index(["scope", "predictor", "measure"]).value
    # |errors| 5, 5, 12, 7 (case 2), 7, 19 (case 3a) points.
    assert table["all", "profile_product", "mae_pp"] == pytest.approx(55 / 6)
    assert table["all", "profile", "mae_difference_vs_profile_product_pp"] == pytest.approx((27 - 55) / 6)
    # Not given: no such rows.
    assert "profile_product" not in set(validate.summary(validation(), n_resamples=300).predictor)


def test_a_replicate_measurement_is_scored_as_the_floor_on_the_rows_both_have():
    """The same pairs measured again (another session's interference.tsv): its IR scored as a
    predictor, on the rows where it and every other predictor are known."""
    again = measured_table().assign(ir=lambda t: t.ir + 0.04)  # every IR 4 points higher ...
    again = again[
        ~((again.case == "2") & (again.target == "A") & (again.partner == "A"))
    ]  # ... one unit not again
    rows = validate.validation_rows(predicted_table(), measured_table(), runtime="docker", replicate=again)
    assert (rows.ir_replicate - rows.ir_measured).dropna().to_numpy() == pytest.approx(0.04)
    table = validate.summary(rows, n_resamples=300).set_index(["scope", "predictor", "measure"])
    assert table.value["all", "replicate", "mae_pp"] == pytest.approx(4.0)
    # The profile's |errors| without the unit A+A: 5, 5, 2, 3, 9 points (by hand).
    assert table.value["all", "profile", "mae_pp"] == pytest.approx(24 / 5)
    assert table.value["all", "profile", "mae_difference_vs_replicate_pp"] == pytest.approx(24 / 5 - 4)
    assert table.units["all", "replicate", "mae_pp"] == 4
    assert "replicate" not in set(validate.summary(validation(), n_resamples=300).predictor)


def test_the_case_mean_predictor_leaves_the_unit_out():
    loo = validation().set_index(validate.KEY).ir_case_mean_loo
    # Case 2's rows: -0.20, -0.30 (unit A,B), -0.10 (B,A), -0.02 (A,A).
    assert loo["2", "A", "B", "m"] == loo["2", "A", "B", "m2"] == pytest.approx((-0.10 - 0.02) / 2)
    assert loo["2", "B", "A", "m"] == pytest.approx((-0.20 - 0.30 - 0.02) / 3)
    assert loo["2", "A", "A", "m"] == pytest.approx((-0.20 - 0.30 - 0.10) / 3)
    # Case 3a: -0.06, 0.08 and the unpredicted 0.00, which the naive predictor may still see.
    assert loo["3a", "B", "A", "m"] == pytest.approx((-0.06 + 0.0) / 2)


def test_mae_sign_and_spearman_against_hand_values_and_scipy():
    rows = validation()
    table = validate.summary(rows, n_resamples=300).set_index(["scope", "predictor", "measure"]).value
    # |errors| 5, 5, 2, 3 (case 2), 3, 9 (case 3a) points.
    assert table["all", "profile", "mae_pp"] == pytest.approx(27 / 6)
    assert table["case 2", "profile", "mae_pp"] == pytest.approx(15 / 4)
    assert table["case 3a", "profile", "mae_pp"] == pytest.approx(12 / 2)
    # |IR| >= 5 %: five rows, the 3a B,A row's sign is wrong.
    assert table["all", "profile", "sign_accuracy"] == pytest.approx(4 / 5)
    scored = rows.dropna(subset=["ir_predicted"])
    rho = stats.spearmanr(scored.ir_measured, scored.ir_predicted).statistic
    assert table["all", "profile", "spearman_rho"] == pytest.approx(rho)
    assert table["all", "zero", "mae_pp"] == pytest.approx((20 + 30 + 10 + 2 + 6 + 8) / 6)
    assert table["all", "zero", "sign_accuracy"] == 0.0 and np.isnan(table["all", "zero", "spearman_rho"])
    loo_errors = [14, 24, (0.52 / 3 - 0.10) * 100, 18, 10, 11]
    assert table["all", "case_mean_loo", "mae_pp"] == pytest.approx(sum(loo_errors) / 6)
    assert table["all", "profile", "mae_difference_vs_zero_pp"] == pytest.approx(27 / 6 - 76 / 6)
    assert table["all", "profile", "mae_difference_vs_case_mean_loo_pp"] == pytest.approx(
        (27 - sum(loo_errors)) / 6
    )


def test_a_resample_counts_each_drawn_unit_s_rows_as_often_as_it_is_drawn():
    rows = validation().dropna(subset=["ir_predicted"])
    units = rows.groupby(validate.UNIT, sort=True).ngroup().to_numpy()
    counts = np.array([2, 0, 1, 0, 2])  # units in key order: (2,A,A) (2,A,B) (2,B,A) (3a,A,B) (3a,B,A)
    weighted = validate.measures(rows.ir_measured, rows.ir_predicted, counts[units])
    drawn = pd.concat([rows[units == u] for u in (0, 0, 2, 4, 4)])
    assert weighted == pytest.approx(validate.measures(drawn.ir_measured, drawn.ir_predicted))
    # Repeated units are ties: the mid-ranks agree with scipy's.
    assert weighted["spearman_rho"] == pytest.approx(
        stats.spearmanr(drawn.ir_measured, drawn.ir_predicted).statistic
    )


def test_the_bootstrap_interval_is_reproducible_with_its_seed():
    rows = validation()
    first = validate.summary(rows, seed=5, n_resamples=300)
    assert first.equals(validate.summary(rows, seed=5, n_resamples=300))
    other = validate.summary(rows, seed=6, n_resamples=300)
    mae = (first.scope == "all") & (first.predictor == "profile") & (first.measure == "mae_pp")
    assert not first[mae].ci_low.equals(other[mae].ci_low)
    low, value, high = first[mae][["ci_low", "value", "ci_high"]].iloc[0]
    assert low <= value <= high and first[mae].ci_method.iloc[0].startswith("bootstrap_units_")
    # Two units in case 3a are too few for an interval.
    case_3a = first[(first.scope == "case 3a") & (first.measure == "mae_pp")]
    assert case_3a.ci_low.isna().all() and (case_3a.note == "fewer than 3 units: no interval").all()


def test_failures_are_the_rows_outside_the_interval_named():
    names = list(validate.failures(validation()).name)
    assert names == [
        "case 2: A beside B (m): measured -0.200 [-0.210, -0.190], predicted -0.150 [-0.180, -0.120]",
        "case 3a: A beside B (m): measured -0.060 [-0.070, -0.050], predicted -0.030 [-0.050, +0.000]",
        "case 3a: B beside A (m): measured +0.080 [+0.070, +0.090], predicted -0.010 [-0.030, +0.010]",
    ]


# --- advise.py ------------------------------------------------------------------------------


def advice_profiles():
    """A is hurt more in B's container than beside it; B is insensitive; removing the limits
    gives A +10 % and B +2 %."""
    sens = (
        sensitivity_rows(
            "A", {"cpu": [(1, -0.2), (2, -0.5)], "memory": [(1, -0.1), (2, -0.3)]}, placements=["2"]
        )
        + sensitivity_rows("A", {"cpu": [(1, -0.1)], "memory": [(1, -0.05)]}, placements=["3a"])
        + sensitivity_rows("B", {"cpu": [(1, 0.0)], "memory": [(1, 0.0)]})
    )
    press = pressure_rows("A", {"cpu": 1, "memory": 1}) + pressure_rows("B", {"cpu": 1, "memory": 1})
    return profiles_of(sens, press, limit_rows({"A": 0.1, "B": 0.02}))


def test_a_mixed_unit_shares_with_the_one_its_label_names_and_is_apart_from_the_other():
    p = abc_profiles()
    # A with B in its container, C apart: cpu 1 + 0.5 = 1.5 -> -0.35 and memory 1 + 2 = 3 -> -0.35
    # on A's same-container curves; the limit effect 0.1 (unlimited): 1.1 * 0.65 - 1.
    row = predict.predict_unit(p, "2-3a", "A", "B|C", "m")
    assert row["ir"] == pytest.approx(1.1 * 0.65 - 1)
    assert row["ir"] == predict.predict_member(p, "A", "m", ["B"], ["C"]).ir
    apart = predict.predict_unit(p, "2-3a", "C", "A+B", "m")  # the one apart: both others elsewhere
    assert apart["ir"] == predict.predict_member(p, "C", "m", (), ["A", "B"]).ir
    units = pd.DataFrame(
        [("2-3a", "A", "B|C", "m"), ("2-3a", "A", "B|C", "m"), ("3a", "A", "B+C", "m"), ("2", "Z", "A", "m")],
        columns=["case", "target", "partner", "metric"],
    )
    table = predict.predict_units(p, units)  # each unit once; Z, not profiled, left out
    assert list(zip(table.case, table.target, table.partner)) == [("2-3a", "A", "B|C"), ("3a", "A", "B+C")]
    assert table.ir[1] == predict.predict_group(p, "3a", ["A", "B", "C"])[0]["ir"]


def test_the_placements_of_two_and_three():
    labels = [(p.label, p.limited, p.case) for p in advise.placements(["B", "A"])]
    assert labels == [("A+B", False, "2"), ("A+B", True, ""), ("A | B", False, "3a"), ("A | B", True, "3b")]
    three = {(p.label, p.case) for p in advise.placements(["A", "B", "C"]) if not p.limited}
    assert three == {
        ("A+B+C", "2"),
        ("A | B+C", "2-3a"),
        ("A+B | C", "2-3a"),
        ("A+C | B", "2-3a"),
        ("A | B | C", "3a"),
    }
    mixed = advise.Placement((("A",), ("B", "C")), False)
    assert [mixed.partner_of(m) for m in "ABC"] == ["B+C", "C|A", "B|A"]  # as the pair study names them
    with pytest.raises(ValueError):
        advise.placements(["A"])


def test_advice_ranks_two_microservices_by_the_hand_computed_total_slowdown():
    measured = pd.DataFrame(
        [("h", "docker", "3a", "A", "B", "m", -0.07), ("h", "docker", "3a", "B", "A", "m", 0.01)],
        columns=["host", "runtime", "case", "target", "partner", "metric", "ir"],
    )
    table = advise.advise(advice_profiles(), ["A", "B"], {"A": "m", "B": "m"}, 2, 4, 1, measured)
    # B's IR is its limit effect, +0.02, when unlimited and 0 when limited; A's (the dominant
    # resource's term, cpu where cores are shared):
    #   apart, unlimited (3a):    1.1 * (1 - 0.1) - 1 = -0.01
    #   apart, limited (3b):      memory only: -0.05
    #   together, unlimited (2):  1.1 * (1 - 0.2) - 1 = -0.12
    #   together, limited:        (1 - 0.2) - 1 = -0.2
    expected = [
        ("A | B", False, 0.01 - 0.02),
        ("A | B", True, 0.05),
        ("A+B", False, 0.12 - 0.02),
        ("A+B", True, 0.2),
    ]
    assert list(zip(table.placement, table.limited, table.total_slowdown)) == [
        (label, limited, pytest.approx(total)) for label, limited, total in expected
    ]
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert list(table.measured) == [True, False, False, False]
    assert table.measured_total_slowdown[0] == pytest.approx(0.07 - 0.01)
    assert table.members[0] == "A -0.010 [-0.010, -0.010]; B +0.020 [+0.020, +0.020]"


def test_an_infeasible_placement_is_excluded_with_its_reason():
    table = advise.advise(
        advice_profiles(), ["A", "B"], {"A": "m", "B": "m"}, cores=1, memory=1.5, memory_per_member=1
    )
    excluded = table[~table.feasible]
    assert set(excluded.placement) == {"A+B", "A | B"} and excluded.limited.all()
    assert excluded["rank"].isna().all() and excluded.total_slowdown.isna().all()
    both = (
        "limited containers take one core per member, disjoint: 2 needed, 1 on the host; "
        "the memory limits add up to 2, the host has 1.5"
    )
    assert set(excluded.excluded_because) == {both}
    assert list(table["rank"][table.feasible]) == [1, 2]  # the unlimited two are still ranked


def test_the_total_interval_sums_the_members_draws():
    # B's pressure uncertain: it moves A's IR only; the total's interval is A's, mirrored.
    sens = sensitivity_rows("A", {"memory": [(4, -0.4)]}) + sensitivity_rows("B", {"memory": [(1, 0.0)]})
    press = pressure_rows("B", {"memory": 2}, half_width=0.5) + pressure_rows("A", {})
    p = profiles_of(sens, press, [], n_draws=20000)
    row = advise.advise(p, ["A", "B"], {"A": "m", "B": "m"}, 2, 4, 1).query("case == '3b'").iloc[0]
    assert (row.total_slowdown, row.slowdown_low, row.slowdown_high) == pytest.approx(
        (0.2, 0.15, 0.25), abs=0.004
    )


def test_a_resource_nobody_was_profiled_on_is_left_out_and_said():
    """A config that profiles the cpu only predicts from the cpu and says what it left out."""
    sens = sensitivity_rows("A", {"cpu": [(1, -0.2), (2, -0.5)]}) + sensitivity_rows("B", {"cpu": [(1, 0.0)]})
    press = [
        r for r in pressure_rows("A", {"cpu": 1}) + pressure_rows("B", {"cpu": 1}) if r["resource"] == "cpu"
    ]
    p = profiles_of(sens, press, limit_rows({"A": 0.1, "B": 0.0}))
    got = predict.predict_member(p, "A", "m", apart=["B"])
    assert got.ir == pytest.approx(1.1 * (1 - 0.2) - 1)  # the limit's removal and the cpu term only
    assert got.reason == "not profiled, left out: memory, disk, network"


def test_the_triples_rows_are_scored_on_their_own_too():
    rows = validation()
    key = rows.set_index(validate.KEY).index
    rows.loc[key.get_loc(("2", "A", "B", "m")), "partner"] = "B+C"  # error 5 points
    rows.loc[key.get_loc(("3a", "A", "B", "m")), "partner"] = "B|C"  # error 3 points
    table = validate.summary(rows, n_resamples=300).set_index(["scope", "predictor", "measure"])
    assert table.loc[("triples", "profile", "mae_pp"), "value"] == pytest.approx(4.0)
    assert table.loc[("triples", "profile", "mae_pp"), "units"] == 2
    assert "triples" not in set(validate.summary(validation(), n_resamples=300).scope)  # pairs only: none
    # Each target's pairs on their own, the triples' rows left out of them.
    pairs_of_a = rows[(rows.target == "A") & ~rows.partner.str.contains(r"[+|]")]
    expected = (pairs_of_a.ir_measured - pairs_of_a.ir_predicted).abs().mean() * 100
    assert table.loc[("pairs of A", "profile", "mae_pp"), "value"] == pytest.approx(expected)
    assert table.loc[("pairs of A", "profile", "mae_pp"), "rows"] == len(pairs_of_a)


def test_placements_tied_in_a_draw_share_its_chance_of_being_best():
    # Every placement gets the same draws: none can be told apart, each is best in a quarter.
    same = np.linspace(0.1, 0.3, 100)

    def total(placement):
        return {"total_slowdown": 0.2, "slowdown_low": 0.1, "slowdown_high": 0.3, "draws": same.copy()}

    table = advise.advise(None, ["A", "B"], {"A": "m", "B": "m"}, 2, 4.0, 1.0, total_of=total)
    ranked = table[table["rank"].notna()]
    assert len(ranked) == 4
    assert ranked["p_best"].to_numpy() == pytest.approx([0.25] * 4)


def test_the_figure_draws_a_prediction_outside_its_own_interval():
    # A point from the point estimates may lie outside the interval of skewed draws (B's random
    # seeks, pooled over sessions: +195 % with an interval of [-307, 75] %): an empty bar there.
    rows = validation()
    rows.loc[rows.ir_predicted.notna().idxmax(), ["ir_predicted", "predicted_low", "predicted_high"]] = [
        1.95,
        -3.07,
        0.75,
    ]
    fig = validate.figure(rows)
    fig.savefig(io.BytesIO(), format="png")
    spans = {
        tuple(sorted(np.round(seg[:, 1], 6)))
        for c in fig.axes[0].collections
        if hasattr(c, "get_segments")
        for seg in map(np.asarray, c.get_segments())
        if len(seg) == 2 and seg[0, 0] == seg[1, 0]  # vertical: a prediction's bar
    }
    assert (-307.0, 75.0) in spans  # the interval as it is, the point (195) above it
