"""The CPU-share model with the rest from pinned bubbles (issue 55, item 2): each unit's IR by
hand from a CPU part (the quota sweep's curves) and a rest (placement 3b's curves and
pressures), in Cases 2, 3a and 3b, in the advice, and said where the profiles lack it."""

import numpy as np
import pandas as pd
import pytest
from interference.studies.profiling import pinned
from interference.studies.profiling.advise import advise, cpu_total, placements
from test_cpu_shares import curve
from test_placement import QUIET, limit_rows, pressure_rows, profiles_of, sensitivity_rows

# L loses 10 % of its gflops at a memory pressure of 1 and 30 % at 2 on the other core; Y is
# not hurt. Y presses on memory with 1, L with 2.
L_MEMORY = {"cpu": [(1, 0.0)], "memory": [(1, -0.1), (2, -0.3)], "disk": [(1, 0.0)], "network": [(1, 0.0)]}


def pinned_profiles(placements=("3b",)):
    sens = sensitivity_rows("L", L_MEMORY, placements, metric="gflops") + sensitivity_rows(
        "Y", QUIET, placements, metric="t"
    )
    press = pressure_rows("L", {"memory": 2}, placements) + pressure_rows("Y", {"memory": 1}, placements)
    return profiles_of(sens, press, limit_rows({"L": 0.0}, "gflops") + limit_rows({"Y": 0.0}, "t"))


CURVES = {
    ("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], case1=0.55),
    ("Y", "t"): curve([0.5, 1.0, 1.0, 1.0], case1=1.0, demand=1.0, threads=1),
}
UNITS = pd.DataFrame(
    [
        ("3a", "L", "Y", "gflops", True),
        ("3b", "L", "Y", "gflops", True),
        ("2", "Y", "L", "t", False),
        ("2", "L", "Y", "gflops", True),
    ],
    columns=["case", "target", "partner", "metric", "higher_is_better"],
)


def test_each_unit_is_its_cpu_part_times_its_rest_by_hand():
    rows = pinned.predict_units(CURVES, pinned_profiles(), UNITS, 2).set_index(["case", "target"])
    # 3a: a core each, L's speed 0.5 against Case 1's 0.55; beside Y's memory pressure 1: -10 %.
    assert rows.loc[("3a", "L"), "ir_cpu"] == pytest.approx(0.5 / 0.55 - 1)
    assert rows.loc[("3a", "L"), "ir_rest"] == pytest.approx(-0.1)
    assert rows.loc[("3a", "L"), "ir"] == pytest.approx(0.5 / 0.55 * 0.9 - 1)
    # 3b: no CPU part; the rest alone (the bubble model of placement 3b).
    assert rows.loc[("3b", "L"), "ir"] == pytest.approx(-0.1)
    # 2: L's two threads and Y's one share two cores (L 4/3, Y 2/3); Y is hurt by no resource.
    assert rows.loc[("2", "Y"), "ir"] == pytest.approx(1 - 1 / (2 / 3))
    assert rows.loc[("2", "L"), "ir"] == pytest.approx((0.5 + 0.8 / 3) / 0.55 * 0.9 - 1)
    # Exact inputs: the interval is the point.
    assert rows.ir_low.to_numpy() == pytest.approx(rows.ir.to_numpy())
    assert rows.ir_high.to_numpy() == pytest.approx(rows.ir.to_numpy())


def test_the_interval_draws_both_parts_and_holds_the_point():
    noisy = {k: curve(list(c.speed), c.case1, c.demand, c.threads, ci=0.05) for k, c in CURVES.items()}
    rows = pinned.predict_units(noisy, pinned_profiles(), UNITS, 2)
    assert ((rows.ir_low < rows.ir) & (rows.ir < rows.ir_high)).sum() >= 3
    cpu_only = pinned.predict_units(noisy, pinned_profiles(), UNITS.iloc[[0]], 2).iloc[0]
    assert cpu_only.ir_high - cpu_only.ir_low > 0.02


def test_without_placement_3b_the_prediction_is_empty_and_says_why():
    rows = pinned.predict_units(CURVES, pinned_profiles(placements=("2", "3a")), UNITS, 2)
    assert rows.ir.isna().all()
    assert rows.reason.str.contains("no placement 3b").all()
    assert pinned.rest_of(pinned_profiles(placements=("3a",))) is None


def test_a_partner_without_a_pinned_profile_is_named():
    units = UNITS.iloc[[0]].assign(partner="S")
    curves = CURVES | {("S", "triad"): curve([0.5, 1, 1, 1], case1=1.0, demand=1.0, threads=1)}
    row = pinned.predict_units(curves, pinned_profiles(), units, 2).iloc[0]
    assert np.isnan(row.ir) and "S" in row.reason


def test_the_advice_adds_each_members_rest_to_its_cpu_part():
    metrics, higher = {"L": "gflops", "Y": "t"}, {"L": True, "Y": False}
    by = {(p.label, p.limited): p for p in placements(["L", "Y"])}
    rest = pinned.rest_of(pinned_profiles())
    # Apart and limited: no CPU part; L beside Y's memory pressure loses 10 %, Y nothing.
    assert cpu_total(CURVES, by["L | Y", True], metrics, higher, 2, rest)["total_slowdown"] == pytest.approx(
        0.1
    )
    together = cpu_total(CURVES, by["L+Y", False], metrics, higher, 2, rest)["total_slowdown"]
    assert together == pytest.approx(-((0.5 + 0.8 / 3) / 0.55 * 0.9 - 1) - (1 - 1 / (2 / 3)))
    total = lambda p: cpu_total(CURVES, p, metrics, higher, 2, rest)  # noqa: E731
    table = advise(None, ["L", "Y"], metrics, 2, 4.0, 1.0, total_of=total)
    assert table[table["rank"] == 1].iloc[0].placement == "L | Y"
