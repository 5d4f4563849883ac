"""The paired design (studies/pairs/phases.py, statistics/paired.py): the schedule, the labels
from the iterations' own timestamps, the paired IR against a hand computation and a second
library, and its coverage by simulation against the unpaired IR."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from interference.studies.base import StudyConfigError
from interference.studies.pairs import PairsStudy, phases
from interference.studies.pairs.statistics import interference_ratios, paired
from interference.studies.pairs.statistics.paired_simulation import Design, Host, coverage
from scipy import stats

# -- the schedule ------------------------------------------------------------------------------


def test_every_block_has_one_phase_with_everyone_and_one_alone_per_member_in_a_seeded_order():
    plan = phases.schedule(100.0, 24, 2, 2, seed=7)
    assert len(plan) == 12 and plan[0].start == 100.0 and plan[-1].end == 124.0
    for b in range(1, 5):
        kinds = sorted(p.active for p in plan if p.block == b)
        assert kinds == [(1,), (1, 2), (2,)]
    orders = {tuple(p.active for p in plan if p.block == b) for b in range(1, 5)}
    assert len(orders) > 1  # a fresh order per block, not one rhythm
    assert phases.schedule(100.0, 24, 2, 2, seed=7) == plan != phases.schedule(100.0, 24, 2, 2, seed=8)


def test_without_switching_nobody_is_held_but_the_kinds_are_the_same(tmp_path):
    held = phases.schedule(0.0, 12, 1, 3, seed=3)
    phases.write(tmp_path, held, switch=False)
    aa = [line.split() for line in (tmp_path / phases.PHASES_FILE).read_text().splitlines()]
    assert all(active == ",1,2,3," for _, _, active in aa)
    assert [float(start) for start, _, _ in aa] == [p.start for p in held]
    assert {p.active for p in held} == {(1, 2, 3), (1,), (2,), (3,)}


def _its(*spans):
    return [{"start": a, "end": b} for a, b in spans]


def test_labels_come_from_the_timestamps_not_from_the_plan():
    plan = [phases.Phase(1, 0, 4, (1, 2)), phases.Phase(1, 4, 8, (1,)), phases.Phase(1, 8, 12, (2,))]
    target = _its((0.1, 1.0), (1.05, 2.0), (3.5, 4.2), (4.3, 5.0), (5.1, 6.0), (8.5, 9.0))
    # The partner ran through the first phase with a loop gap of 0.1 s, stopped at 3.9, then
    # late: one iteration of it still ran into the target's alone phase until 4.5.
    partner = _its((0.0, 1.5), (1.6, 3.0), (3.1, 4.5), (8.0, 11.9))
    phases.label([target, partner], plan)
    assert [i["phase"] for i in target] == ["with", "with", "mixed", "mixed", "without", "mixed"]
    assert [i["block"] for i in target] == [1, 1, 0, 0, 1, 0]
    # The target did not run through any of the partner's iterations (it began at 0.1 and left a
    # 1.5-s gap), and it ran into the partner's alone phase: every one of them is mixed.
    assert {i["phase"] for i in partner} == {"mixed"}


def test_a_partner_that_paused_longer_than_its_loop_s_own_overhead_makes_an_iteration_mixed():
    plan = [phases.Phase(1, 0, 10, (1, 2))]
    target = _its((1.0, 3.0))
    partner = _its((0.0, 1.5), (1.5 + phases.LOOP_GAP_S + 0.1, 4.0))
    phases.label([target, partner], plan)
    assert target[0]["phase"] == "mixed"


def test_the_a_a_design_labels_by_the_plan_alone():
    plan = phases.schedule(0.0, 6, 1, 2, seed=1)
    target = [{"start": p.start + 0.1, "end": p.end - 0.1} for p in plan]
    partner = [{"start": p.start, "end": p.end} for p in plan]  # runs throughout
    phases.label([target, partner], plan, switch=False)
    want = ["with" if len(p.active) == 2 else "without" if p.active == (1,) else "mixed" for p in plan]
    assert [i["phase"] for i in target] == want


# -- the config --------------------------------------------------------------------------------


def _cfg(**pairs):
    base = {"microservices": ["L", "S"], "cases": ["1", "3b"], "pairs": ["L+S"], "iterations": 2,
            "window_s": {"3b": 4}, "iteration_timeout_s": 60, "repetitions": 1,
            "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
            "sizes": {"L": {"n": 800}, "S": {"array_elements": 2000000, "ntimes": 3}}}  # fmt: skip
    return base | pairs


def test_a_phased_run_s_window_is_its_blocks_of_phases_sized_by_the_slowest_member():
    study = PairsStudy()
    s = study.settings(_cfg(phases={"blocks": 2, "iterations": 3, "min_phase_s": 0.5}), "case3b/L+S")
    slowest = 0.1 + 800**3 / 1.1e11  # containers/iteration-times.yaml, L at n = 800
    assert s["phases"]["phase_s"] == pytest.approx(max(0.5, 4 * slowest), abs=0.05)
    assert s["window_s"] == pytest.approx(2 * 3 * s["phases"]["phase_s"])
    assert "phases" not in study.settings(_cfg(phases={"blocks": 2}), "case1/L")  # Case 1 runs as before


def test_phases_and_a_window_an_adaptive_rule_moves_are_refused():
    cfg = _cfg(phases={"blocks": 1}, adaptive={"min_overlap_samples": 3, "window_cap_s": 60})
    with pytest.raises(StudyConfigError, match="phases"):
        PairsStudy().check(cfg)


# -- the estimator -----------------------------------------------------------------------------


def _rows(case, partner, rep, block, phase, values):
    return [{"host": "h", "runtime": "docker", "case": case, "target": "L", "partner": partner,
             "repetition": rep, "member": 1, "iteration": i, "metric": "gflops", "value": v, "unit": "GFLOPS",
             "higher_is_better": True, "start": 0.0, "end": 1.0, "in_overlap": phase in ("", "with"),
             "status": "ok", "phase": phase, "block": block} for i, v in enumerate(values)]  # fmt: skip


RUNS = {  # partner -> runs -> (with values, without values), one block each
    "S": [([8.0, 8.4], [10.0, 10.2]), ([7.6, 8.0], [9.8, 10.4])],
    "Y": [([9.0, 9.4], [10.0, 10.0]), ([9.5, 9.1], [9.9, 10.5]), ([9.2, 9.6], [10.1, 9.9])],
}


def _samples():
    rows = _rows("1", "-", 1, 0, "", [10.0, 10.1]) + _rows("1", "-", 2, 0, "", [9.9, 10.3])
    for partner, runs in RUNS.items():
        for rep, (w, wo) in enumerate(runs, 1):
            rows += _rows("3b", partner, rep, 1, "with", w) + _rows("3b", partner, rep, 1, "without", wo)
            rows += _rows("3b", partner, rep, 0, "mixed", [1.0])  # never counted
    return pd.DataFrame(rows)


def test_the_paired_ir_is_the_mean_run_log_ratio_with_the_partners_pooled_run_variance_by_hand():
    t = interference_ratios(_samples(), n_resamples=200).set_index("partner")
    logs = {p: [math.log(np.mean(w) / np.mean(wo)) for w, wo in runs] for p, runs in RUNS.items()}
    ss = sum(sum((x - np.mean(v)) ** 2 for x in v) for v in logs.values())
    df = sum(len(v) - 1 for v in logs.values())  # 1 + 2
    for p, v in logs.items():
        se = math.sqrt(ss / df / len(v))
        q = stats.t.ppf(0.975, df)
        r = t.loc[p]
        assert r["ci_level"] == paired.RUNS_PAIRED and r["ci_df"] == df
        assert r["ir"] == pytest.approx(math.exp(np.mean(v)) - 1)
        assert r["ir_ci_low"] == pytest.approx(math.exp(np.mean(v) - q * se) - 1)
        assert r["ir_ci_high"] == pytest.approx(math.exp(np.mean(v) + q * se) - 1)
        assert r["ir_se_baseline"] == 0  # Case 3b: no baseline outside the run
        # In Case 3b the partner's effect alone is the IR.
        assert (
            r["paired_partner_ir"],
            r["paired_partner_ci_low"],
            r["paired_partner_ci_high"],
        ) == pytest.approx((r["ir"], r["ir_ci_low"], r["ir_ci_high"]))
        # The separate Case 1 runs' IR stays beside it (the with iterations against them).
        w = np.concatenate([w for w, _ in RUNS[p]])
        assert r["ir_unpaired"] == pytest.approx(w.mean() / np.mean([10.0, 10.1, 9.9, 10.3]) - 1)


def test_the_paired_interval_is_ordinary_least_squares_on_the_run_ratios():
    """A second library: the run log ratios regressed on the partner (statsmodels OLS, one
    residual variance: the pooled one) give the same estimate, SE and degrees of freedom."""
    runs = paired.run_ratios(interference_ratios.__globals__["_prepare"](_samples()))
    fit = smf.ols("log_ratio ~ C(partner) - 1", data=runs).fit()
    effects = paired.partner_effects(interference_ratios.__globals__["_prepare"](_samples()))
    for p in RUNS:
        e = effects[("h", "docker", "3b", "L", p, "gflops")]
        assert e.log_ratio == pytest.approx(fit.params[f"C(partner)[{p}]"])
        assert e.se == pytest.approx(fit.bse[f"C(partner)[{p}]"])
        assert e.df == fit.df_resid


def test_one_run_per_cell_gives_an_interval_over_blocks_that_decides_nothing():
    rows = []
    for b, (w, wo) in enumerate(
        [([8.0, 8.2], [10.0, 10.1]), ([8.1, 8.3], [9.9, 10.2]), ([7.9, 8.0], [10, 10])], 1
    ):
        rows += _rows("3b", "S", 1, b, "with", w) + _rows("3b", "S", 1, b, "without", wo)
    r = interference_ratios(pd.DataFrame(rows), n_resamples=200).iloc[0]
    assert r["ci_level"] == paired.BLOCKS_PAIRED and r["ci_df"] == 2
    from interference.findings.inference import ITERATIONS
    from interference.studies.pairs.findings.checks import LEVELS

    assert LEVELS[r["ci_level"]] == ITERATIONS  # blocks lie inside one run: no verdict on them


def test_in_the_unlimited_cases_the_paired_ir_is_the_partner_effect_times_the_limit_effect():
    rows = []
    for rep, (lim, unl) in enumerate([([10.0, 10.2], [12.0, 12.3]), ([9.9, 10.1], [12.2, 11.9]),
                                      ([10.1, 10.0], [12.1, 12.0])], 1):  # fmt: skip
        rows += _rows("1", "-", rep, 0, "", lim) + _rows("1u", "-", rep, 0, "", unl)
    for rep, (w, wo) in enumerate([([9.0, 9.2], [12.0, 12.2]), ([9.1, 9.3], [12.1, 12.0])], 1):
        rows += _rows("2", "S", rep, 1, "with", w) + _rows("2", "S", rep, 1, "without", wo)
    t = interference_ratios(pd.DataFrame(rows), n_resamples=200).set_index("case")
    limit, two = t.loc["1u"], t.loc["2"]
    partner = np.mean([math.log(np.mean(w) / np.mean(wo)) for w, wo in
                       [([9.0, 9.2], [12.0, 12.2]), ([9.1, 9.3], [12.1, 12.0])]])  # fmt: skip
    assert two["ir"] == pytest.approx((1 + limit["ir"]) * math.exp(partner) - 1)
    assert two["ir_se_baseline"] > 0 and two["df_baseline"] == limit["ci_df"]  # shared by the target's cells
    assert "limit" in two["reason"]
    # The partner's effect alone stands beside it: the runs' log ratios, by hand (2 runs, 1 df).
    logs = [
        math.log(np.mean(w) / np.mean(wo))
        for w, wo in [([9.0, 9.2], [12.0, 12.2]), ([9.1, 9.3], [12.1, 12.0])]
    ]
    half = stats.t.ppf(0.975, 1) * np.std(logs, ddof=1) / math.sqrt(2)
    assert two["paired_partner_ir"] == pytest.approx(math.exp(partner) - 1)
    assert two["paired_partner_ci_low"] == pytest.approx(math.exp(partner - half) - 1)
    assert two["paired_partner_ci_high"] == pytest.approx(math.exp(partner + half) - 1)


# -- by simulation -------------------------------------------------------------------------------


def test_the_paired_ir_covers_95_percent_and_is_narrower_than_the_unpaired_one():
    """Per-run effects (5 %), heavy-tailed iterations (CV 9 %, t with 3 df), a partner effect
    that wanders by 1 % between runs: 3 partners x 3 runs, 2 blocks of 4 iterations a phase."""
    cov = coverage(120, seed=52)
    assert 0.92 <= cov["paired"]["coverage"] <= 0.985, cov
    assert cov["paired"]["median_half_width"] < 0.7 * cov["unpaired"]["median_half_width"], cov


def test_a_partner_effect_that_varies_between_runs_is_still_covered():
    cov = coverage(120, seed=53, host=Host(interaction_sd=0.03), design=Design(runs=2))
    assert 0.92 <= cov["paired"]["coverage"] <= 0.99, cov
