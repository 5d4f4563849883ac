"""Known-answer tests of interference.steps.statistics on small hand-computed data.

Run: PYTHONPATH=scripts .venv/bin/python -m pytest tests/test_statistics.py -q"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from interference.stats import descriptive
from interference.studies.pairs import statistics as st
from interference.studies.pairs.statistics import hypothesis_tests as sig
from scipy import stats
from statsmodels.stats.multicomp import pairwise_tukeyhsd

REPO = Path(__file__).resolve().parents[1]


def rows(
    case,
    target,
    partner,
    values,
    metric="gflops",
    higher=True,
    unit="GFLOPS",
    status="ok",
    in_overlap=True,
    host="h1",
    runtime="docker",
    member=1,
):
    """Sample rows of one group; a value None is a failed sample (empty value)."""
    out = []
    for i, v in enumerate(values):
        out.append(
            dict(
                host=host,
                runtime=runtime,
                case=case,
                target=target,
                partner=partner,
                repetition=1,
                member=member,
                iteration=i,
                metric=metric,
                value=np.nan if v is None else float(v),
                unit=unit,
                higher_is_better=higher,
                start=float(i),
                end=float(i) + 1,
                in_overlap=in_overlap,
                status=status if v is not None else "timeout",
            )
        )
    return out


def frame(*groups) -> pd.DataFrame:
    return pd.DataFrame([r for g in groups for r in g])


def one(df: pd.DataFrame, **where) -> pd.Series:
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, f"{len(sel)} rows for {where}"
    return sel.iloc[0]


# ------------------------------------------------------------------------------------ summary


def test_trimmed_mean_papers_definition():
    # [1,2,3,4,100]: P10 = 1.4, P90 = 61.6 -> keep 2, 3, 4 -> 3.
    assert descriptive.trimmed_mean([1, 2, 3, 4, 100]) == pytest.approx(3.0)
    # 1..10: P10 = 1.9, P90 = 9.1 -> keep 2..9 -> 5.5.
    assert descriptive.trimmed_mean(range(1, 11)) == pytest.approx(5.5)
    # 1..11: P10 = 2, P90 = 10 exactly; the bounds are inclusive -> keep 2..10 -> 6.
    assert descriptive.trimmed_mean(range(1, 12)) == pytest.approx(6.0)
    assert descriptive.trimmed_mean([7.0]) == 7.0
    assert math.isnan(descriptive.trimmed_mean([1.0, 3.0]))  # no value inside [1.2, 2.8]
    assert math.isnan(descriptive.trimmed_mean([]))


def test_summary_known_answers():
    s = st.summarize(frame(rows("1", "L", "", [2, 4, 4, 4, 5, 5, 7, 9])))
    r = one(s, case="1")
    assert r["n"] == 8
    assert r["mean"] == pytest.approx(5.0)
    assert r["median"] == pytest.approx(4.5)
    assert r["min"] == 2 and r["max"] == 9
    # Sum of squared deviations 32, n - 1 = 7.
    assert r["sd"] == pytest.approx(math.sqrt(32 / 7))
    assert r["cv"] == pytest.approx(math.sqrt(32 / 7) / 5)
    # P10 = 3.4, P90 = 7.6 -> keep 4, 4, 4, 5, 5, 7 -> 29/6.
    assert r["trimmed_mean"] == pytest.approx(29 / 6)
    # t(0.975, 7) = 2.3646 (tables); sem = sqrt(32/7)/sqrt(8) = 0.755929 -> 5 -/+ 1.787488.
    assert r["ci_low"] == pytest.approx(3.212512, abs=1e-5)
    assert r["ci_high"] == pytest.approx(6.787488, abs=1e-5)
    assert r["ci_method"] == "t"
    assert r["unit"] == "GFLOPS" and bool(r["higher_is_better"]) is True
    assert r["n_excluded_overlap"] == 0 and r["n_excluded_failed"] == 0
    assert r["note"] == ""
    assert list(s.columns) == st.SUMMARY_COLUMNS


def test_exclusion_counts_and_values():
    df = frame(
        rows("2", "L", "S", [10, 11, 12, 13, 14]),
        rows("2", "L", "S", [1000, 2000], in_overlap=False),  # ran partly alone
        rows("2", "L", "S", [None]),  # timeout
        rows("2", "L", "S", [None], in_overlap=False),  # failed and outside
        rows("2", "L", "S", [5000], status="exit 1"),  # failed with a value
    )
    df.loc[len(df)] = dict(df.iloc[0], value=np.nan, status="ok")  # "ok" but no value
    r = one(st.summarize(df), case="2")
    assert r["n"] == 5
    assert r["mean"] == pytest.approx(12.0)
    assert r["max"] == 14
    assert r["n_excluded_overlap"] == 2
    # A failed sample outside the overlap counts once, as failed.
    assert r["n_excluded_failed"] == 4


def test_iterations_under_steal_are_left_out_by_the_fixed_rule():
    """An iteration whose member lost more than a tenth of its own CPUs to the hypervisor is
    left out and counted in n_excluded_steal; at exactly a tenth, or with no reading, it counts.
    A failed or outside iteration under steal is counted once, as before. The IR reads the same
    valid iterations."""
    steal = [0.0, 0.10, np.nan, 0.11, 0.5]
    df = frame(rows("2", "L", "S", [10, 11, 12, 100, 200]), rows("2", "L", "S", [None]))
    df["own_steal"] = [*steal, 0.9]
    df = pd.concat([df, frame(rows("1", "L", "", [10.0, 10.0, 10.0]))], ignore_index=True)
    r = one(st.summarize(df), case="2")
    assert r["n"] == 3 and r["mean"] == pytest.approx(11.0)
    assert (r["n_excluded_steal"], r["n_excluded_failed"], r["n_excluded_overlap"]) == (2, 1, 0)
    ir = st.interference_ratios(df, n_resamples=200).set_index("case").loc["2"]
    assert ir["mean"] == pytest.approx(11.0) and ir["n"] == 3


def test_single_sample_defined():
    r = one(st.summarize(frame(rows("1", "L", "", [19.5]))), case="1")
    assert r["n"] == 1 and r["mean"] == 19.5 and r["median"] == 19.5
    assert r["trimmed_mean"] == 19.5
    assert math.isnan(r["sd"]) and math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])
    assert "n=1" in r["note"]


def test_zero_variance_defined():
    r = one(st.summarize(frame(rows("1", "L", "", [0.1] * 7))), case="1")
    assert r["sd"] == 0 and r["cv"] == 0
    assert r["ci_low"] == r["ci_high"] == pytest.approx(0.1)
    assert r["trimmed_mean"] == pytest.approx(0.1)
    assert "zero variance" in r["note"]


def test_all_failed_group_is_reported():
    s = st.summarize(frame(rows("1", "L", "", [1, 2, 3]), rows("2", "L", "S", [None, None, None])))
    r = one(s, case="2")
    assert r["n"] == 0 and r["n_excluded_failed"] == 3
    assert math.isnan(r["mean"]) and "no valid samples" in r["note"]


def test_two_distinct_values_trimmed_mean_noted():
    r = one(st.summarize(frame(rows("1", "L", "", [1.0, 3.0]))), case="1")
    assert r["mean"] == 2.0 and math.isnan(r["trimmed_mean"])
    assert "trimmed mean undefined" in r["note"]


def test_empty_input():
    empty = pd.DataFrame(columns=list(frame(rows("1", "L", "", [1])).columns))
    assert st.summarize(empty).empty
    assert st.interference_ratios(empty).empty
    assert sig.anova(empty).empty
    assert sig.posthoc(empty).empty


# -------------------------------------------------------------------------------- interference


def test_ir_sign_rule_both_ways():
    assert st.ir_value(8.0, 10.0, higher_is_better=True) == pytest.approx(-0.2)  # slower
    assert st.ir_value(12.0, 10.0, higher_is_better=True) == pytest.approx(0.2)
    assert st.ir_value(8.0, 10.0, higher_is_better=False) == pytest.approx(0.2)  # less time
    assert st.ir_value(12.0, 10.0, higher_is_better=False) == pytest.approx(-0.2)


def test_papers_linpack_case2_cross_check():
    # The papers: Linpack Case 2, L beside S: 23.81 GFLOPS against the 19.17 baseline.
    df = frame(rows("1", "L", "", [19.07, 19.17, 19.27]), rows("2", "L", "S", [23.71, 23.81, 23.91]))
    r = one(st.interference_ratios(df), case="2")
    assert r["mean"] == pytest.approx(23.81) and r["baseline_mean"] == pytest.approx(19.17)
    assert r["n"] == 3 and r["baseline_n"] == 3
    assert round(r["ir"], 3) == 0.242
    assert r["ir_ci_low"] < r["ir"] < r["ir_ci_high"]
    assert "may be too narrow" in r["reason"]  # only 3 samples a side
    # The same numbers for a lower-is-better metric (e.g. seconds): the sign flips.
    low = frame(
        rows("1", "L", "", [19.07, 19.17, 19.27], metric="time", higher=False, unit="s"),
        rows("2", "L", "S", [23.71, 23.81, 23.91], metric="time", higher=False, unit="s"),
    )
    r = one(st.interference_ratios(low), case="2")
    assert round(r["ir"], 3) == -0.242
    assert r["ir_ci_low"] < r["ir"] < r["ir_ci_high"] < 0


def test_ir_bootstrap_ci_reproducible_and_covers():
    rng = np.random.default_rng(3)
    df = frame(rows("1", "L", "", rng.normal(20, 1, 30)), rows("3a", "L", "S", rng.normal(16, 1, 30)))
    a = st.interference_ratios(df)
    b = st.interference_ratios(df.sample(frac=1, random_state=1))  # row order does not matter
    pd.testing.assert_frame_equal(a, b)
    r = one(a, case="3a")
    assert r["ir"] == pytest.approx((r["mean"] - r["baseline_mean"]) / r["baseline_mean"])
    assert r["ir_ci_low"] < r["ir"] < r["ir_ci_high"]
    assert r["ir_ci_low"] > -0.26 and r["ir_ci_high"] < -0.14
    assert r["ir_ci_method"] == "bootstrap_bca_2000" and r["reason"] == st.ONE_RUN
    assert r["ci_level"] == st.ITERATIONS_LEVEL and (r["runs"], r["baseline_runs"]) == (1, 1)
    # Another seed gives another (close) interval: the seed is really used.
    c = one(st.interference_ratios(df, seed=7), case="3a")
    assert c["ir_ci_low"] != r["ir_ci_low"] and c["ir_ci_low"] == pytest.approx(r["ir_ci_low"], abs=0.01)


def repeated(case, partner, level, runs, n, run_sd, it_sd, rng):
    """Samples of `runs` runs of n iterations: each run's level moves by run_sd (relative), each
    iteration by it_sd around its run's."""
    out = []
    for rep in range(1, runs + 1):
        run_level = level * (1 + rng.normal(0, run_sd))
        for r in rows(case, "L", partner, run_level * (1 + rng.normal(0, it_sd, n))):
            out.append({**r, "repetition": rep, "iteration": r["iteration"] + 100 * rep})
    return out


def test_a_cells_runs_are_its_repetitions_in_order_each_sorted_as_a_groupby_gives_them():
    from interference.stats.variance_components import runs_of

    frame = pd.DataFrame(
        {"repetition": [3, 1, 3, np.nan, 1, 2, 10], "value": [5.0, 2.0, 4.0, 9.0, 1.0, 7.0, 0.5]}
    )
    # By hand: run 1 (2, 1), run 2 (7), run 3 (5, 4), run 10 (0.5); the row without a run left out.
    assert [r.tolist() for r in runs_of(frame)] == [[1.0, 2.0], [7.0], [4.0, 5.0], [0.5]]
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"repetition": rng.integers(1, 6, 200), "value": rng.normal(size=200)})
    expected = [np.sort(g.to_numpy()) for _, g in frame.groupby("repetition", sort=True)["value"]]
    assert all(np.array_equal(a, b) for a, b in zip(runs_of(frame), expected, strict=True))
    assert runs_of(frame.iloc[:0]) == []


def test_with_repeated_runs_the_ir_interval_covers_runs_from_their_variance_components():
    """Three baseline runs and two runs of the case, 8 iterations each. Each side has its own
    components (the baseline's runs, the concurrent cell's), here by the balanced one-way
    ANOVA's mean squares written out with numpy, and the interval is the log-ratio t interval
    with Welch and Satterthwaite's degrees of freedom. The pooled components are checked against
    statsmodels' REML mixed model (a second library: for balanced runs REML and the ANOVA
    estimates agree)."""
    import statsmodels.formula.api as smf
    from interference.stats.variance_components import nested

    rng = np.random.default_rng(11)
    df = frame(
        repeated("1", "", 20.0, 3, 8, 0.05, 0.01, rng), repeated("3a", "S", 16.0, 2, 8, 0.05, 0.01, rng)
    )
    r = one(st.interference_ratios(df), case="3a")
    assert (r["ci_level"], r["runs"], r["baseline_runs"]) == (st.RUNS_LEVEL, 2, 3)

    def side(case):
        g = df[df["case"] == case]
        y = g["value"] / g["value"].mean()
        by_run = [y[g["repetition"] == k].to_numpy() for k in sorted(set(g["repetition"]))]
        runs, n = len(by_run), by_run[0].size
        msb = n * sum((x.mean() - y.mean()) ** 2 for x in by_run) / (runs - 1)
        return msb / (runs * n), runs - 1  # the variance of a balanced cell's mean: MS_runs / (r n)

    (v_x, df_x), (v_b, df_b) = side("3a"), side("1")
    welch = (v_x + v_b) ** 2 / (v_x**2 / df_x + v_b**2 / df_b)
    ratio = r["mean"] / r["baseline_mean"]
    t = stats.t.ppf(0.975, welch)
    se = np.sqrt(v_x + v_b)
    assert (r["ir_ci_low"], r["ir_ci_high"]) == pytest.approx(
        (ratio * np.exp(-t * se) - 1, ratio * np.exp(t * se) - 1), rel=1e-3
    )
    assert r["ci_df"] == pytest.approx(welch) and r["ir_ci_method"] == f"variance_components_t{welch:.3g}"
    # The IR's SE in its two parts (delta method), each side's with its components' df.
    assert (r["ir_se_own"], r["ir_se_baseline"]) == pytest.approx(
        (ratio * np.sqrt(v_x), ratio * np.sqrt(v_b))
    )
    assert (r["df_own"], r["df_baseline"]) == (df_x, df_b)
    # The pooled components against statsmodels' REML.
    v = df.assign(rel=df["value"] / df.groupby("case")["value"].transform("mean"))
    v["run"] = v["case"] + v["repetition"].astype(str)
    with np.errstate(all="ignore"):
        m = smf.mixedlm("rel ~ C(case)", v, groups="run").fit(reml=True)
    pooled = nested(df["value"], list(df["case"]), df["repetition"])
    assert (pooled.run, pooled.iteration) == pytest.approx(
        (float(m.cov_re.iloc[0, 0]), float(m.scale)), rel=1e-3
    )


def test_the_baselines_components_are_case_1s_own_whatever_case_1u_does():
    """Case 1 and 1u vary differently here (Case 1's runs more, 1u's iterations more:
    calibration.MEASURED_ALONE), so the baseline's side of an IR reads Case 1's cells alone (with
    the drift check's): a Case 1u ten times as noisy beside it changes no interval against Case 1."""
    rng = np.random.default_rng(12)
    base = [repeated("1", "", 20.0, 3, 6, 0.05, 0.02, rng), repeated("3b", "S", 16.0, 2, 6, 0.05, 0.02, rng)]
    quiet = one(st.interference_ratios(frame(*base)), case="3b")
    wild = repeated("1u", "", 30.0, 3, 6, 0.5, 0.3, rng)
    beside = one(st.interference_ratios(frame(*base, wild)), case="3b")
    cols = ["ir", "ir_ci_low", "ir_ci_high", "ir_se_baseline", "df_baseline"]
    assert beside[cols].tolist() == pytest.approx(quiet[cols].tolist())
    assert quiet["df_baseline"] == 2  # three runs


def test_a_means_se_weights_unequal_runs_by_their_iterations():
    """moment_se by hand: the iteration-weighted mean of runs of 2 and 8 iterations has the
    variance run·((2/10)² + (8/10)²) + iteration/10; balanced (5 and 5) it is MS_runs/(r·n)
    from the same mean squares; below half the iterations' part it is floored there."""
    from interference.stats.variance_components import Components, moment_se, nested

    c = Components(iteration=0.01, run=0.002, df_iteration=8, df_run=1, run_moment=0.002)
    assert moment_se(c, [2, 8]) == pytest.approx(math.sqrt(0.002 * (0.04 + 0.64) + 0.01 / 10))
    rng = np.random.default_rng(4)
    values = np.concatenate([1 + 0.1 * rng.standard_normal(5), 1.3 + 0.1 * rng.standard_normal(5)])
    runs = [1] * 5 + [2] * 5
    k = nested(values, ["c"] * 10, runs)
    y = values / values.mean()
    msb = 5 * ((y[:5].mean() - y.mean()) ** 2 + (y[5:].mean() - y.mean()) ** 2) / 1
    assert moment_se(k, [5, 5]) ** 2 == pytest.approx(msb / 10)
    negative = Components(iteration=0.01, run=0.0, df_iteration=8, df_run=1, run_moment=-0.01)
    assert moment_se(negative, [2, 8]) == pytest.approx(math.sqrt(0.5 * 0.01 / 10))


def test_the_runs_interval_covers_a_rerun_where_the_iterations_interval_does_not():
    """Simulated reruns with run-to-run variation five times the iterations': the true IR is
    -20 %. The runs-level interval covers it about 95 % of the time; the iterations-only bootstrap
    of one run per cell (the old default) far less often."""
    rng = np.random.default_rng(5)
    covered_runs = covered_its = 0
    trials = 120
    for _ in range(trials):
        df = frame(repeated("1", "", 20.0, 3, 6, 0.05, 0.01, rng), repeated("3a", "S", 16.0, 2, 6, 0.05, 0.01, rng),
                   repeated("3b", "S", 16.0, 2, 6, 0.05, 0.01, rng))  # fmt: skip
        r = one(st.interference_ratios(df), case="3a")
        covered_runs += r["ir_ci_low"] <= -0.2 <= r["ir_ci_high"]
        one_run = df[df["repetition"] == 1]
        q = one(st.interference_ratios(one_run, n_resamples=200), case="3a")
        covered_its += q["ir_ci_low"] <= -0.2 <= q["ir_ci_high"]
    assert covered_runs / trials >= 0.88, covered_runs
    assert covered_its / trials <= 0.6, covered_its


def test_the_recommended_design_is_kalibera_and_jones_by_hand():
    """Run variance 0.0025 (a 5 % CV between runs), iteration variance 0.0004, a run's overhead
    2 s against 1 s an iteration: sqrt(2 / 1 × 0.0004 / 0.0025) = 0.57, so 1 iteration per run,
    and 1.96² / 0.05² × (0.0025 + 0.0004) = 4.46, so 5 runs."""
    from interference.stats.variance_components import Components, recommend

    assert recommend(Components(0.0004, 0.0025, 50, 10), 2.0, 1.0) == (1, 5)
    # No variance between runs: one run of enough iterations (1.96² / 0.05² × 0.0004 = 0.61 -> 2).
    assert recommend(Components(0.0004, 0.0, 50, 10), 2.0, 1.0) == (2, 1)


def test_the_variance_table_pools_a_targets_cells_and_says_when_runs_were_not_repeated():
    from interference.studies.pairs.statistics.variance import variance_components

    rng = np.random.default_rng(2)
    df = frame(
        repeated("1", "", 20.0, 3, 8, 0.05, 0.01, rng), repeated("3a", "S", 16.0, 2, 8, 0.05, 0.01, rng)
    )
    r = variance_components(df).iloc[0]
    assert (r["cells"], r["runs"], r["df_run"], r["iterations_per_run"]) == (2, 5, 3, 8)
    assert r["run_share"] > 0.5 and r["note"] == ""
    once = variance_components(df[df["repetition"] == 1]).iloc[0]
    assert once["df_run"] == 0 and "not measured" in once["note"]


def test_the_variance_table_gives_each_side_its_own_components_by_hand():
    """Case 1's runs 10, 12 | 14, 16 | 18, 20 (mean 15) against 3a's 9, 11 | 9, 11 (mean 10), on
    values relative to their cell's mean. Case 1: within a run +-1/15, MS 6/225 over 3 df;
    between runs 2 x ((4/15)^2 + 0 + (4/15)^2) = 64/225 over 2 df; so iteration 2/225 and run
    (32/225 - 2/225) / 2 = 15/225. 3a: within +-1/10, MS 0.04 / 2 = 0.02, equal run means: run 0."""
    from interference.studies.pairs.statistics.variance import variance_components

    def runs(case, partner, *values):
        return [{**r, "repetition": k} for k, v in enumerate(values, 1) for r in rows(case, "L", partner, v)]

    df = frame(runs("1", "", [10, 12], [14, 16], [18, 20]), runs("3a", "S", [9, 11], [9, 11]))
    r = variance_components(df).iloc[0]
    assert r["baseline_iteration_var"] == pytest.approx(2 / 225)
    assert r["baseline_run_var"] == pytest.approx(15 / 225) and r["baseline_df_run"] == 2
    assert r["concurrent_iteration_var"] == pytest.approx(0.02)
    assert r["concurrent_run_var"] == 0 and r["concurrent_df_run"] == 1
    # The pooled components are the two cells' together: neither side's.
    assert r["df_run"] == 3 and r["run_var"] not in (pytest.approx(15 / 225), 0)
    # A target without concurrent cells: that side empty, with no degrees of freedom.
    alone = variance_components(frame(runs("1", "", [10, 12], [14, 16]))).iloc[0]
    assert np.isnan(alone["concurrent_run_var"]) and alone["concurrent_df_run"] == 0


def test_ir_zero_variance_falls_back_to_percentile():
    df = frame(rows("1", "L", "", [10.0] * 5), rows("2", "L", "S", [12.0] * 5))
    r = one(st.interference_ratios(df), case="2")
    assert r["ir"] == pytest.approx(0.2)
    assert r["ir_ci_low"] == pytest.approx(0.2) and r["ir_ci_high"] == pytest.approx(0.2)
    assert r["ir_ci_method"] == "bootstrap_percentile_2000"
    assert "BCa" in r["reason"]


def test_ir_degenerate_inputs():
    df = frame(
        rows("1", "L", "", [10, 11, 12]),
        rows("2", "L", "S", [9]),  # one sample: IR but no CI
        rows("3a", "L", "S", [None, None]),  # all failed
        rows("2", "S", "L", [5, 6], metric="triad"),  # S has no case 1 at all
        rows("1", "B", "", [None, None], metric="mb"),  # B's baseline all failed
        rows("2", "B", "L", [1, 2], metric="mb"),
    )
    ir = st.interference_ratios(df)
    r = one(ir, target="L", case="2")
    assert r["ir"] == pytest.approx((9 - 11) / 11)
    assert math.isnan(r["ir_ci_low"]) and math.isnan(r["ir_ci_high"]) and r["ir_ci_method"] == ""
    assert "fewer than 2 samples" in r["reason"]
    r = one(ir, target="L", case="3a")
    assert math.isnan(r["ir"]) and r["reason"] == "no valid samples" and r["n"] == 0
    r = one(ir, target="S")
    assert math.isnan(r["ir"]) and r["reason"] == "no baseline" and math.isnan(r["baseline_mean"])
    r = one(ir, target="B")
    assert math.isnan(r["ir"]) and r["reason"] == "baseline has no valid samples"
    assert list(ir.columns) == st.INTERFERENCE_COLUMNS


def test_ir_baseline_per_host_and_runtime():
    df = frame(
        rows("1", "L", "", [10, 10.5], host="a"),
        rows("1", "L", "", [20, 20.5], host="b"),
        rows("2", "L", "L", [12, 12.5], host="a"),
        rows("2", "L", "L", [12, 12.5], host="b"),
    )
    ir = st.interference_ratios(df)
    assert one(ir, host="a")["baseline_mean"] == pytest.approx(10.25)
    assert one(ir, host="b")["baseline_mean"] == pytest.approx(20.25)


def test_self_pair_pools_both_members():
    df = frame(
        rows("1", "L", "", [10, 10]),
        rows("3b", "L", "L", [8, 9], member=1),
        rows("3b", "L", "L", [7, 8], member=2),
    )
    r = one(st.interference_ratios(df), case="3b")
    assert r["n"] == 4 and r["mean"] == pytest.approx(8.0) and r["ir"] == pytest.approx(-0.2)


def test_case_without_partner_data():
    # Partner S ran in cases 2 and 3a only: no invented 3b row, posthoc compares 1, 2, 3a.
    rng = np.random.default_rng(5)
    df = frame(
        rows("1", "L", "", rng.normal(10, 1, 8)),
        *[
            rows(c, "L", p, rng.normal(10, 1, 8))
            for c in ["2", "3a", "3b"]
            for p in ["L", "S"]
            if not (c == "3b" and p == "S")
        ],
    )
    ir = st.interference_ratios(df)
    assert len(ir) == 5 and not ((ir["case"] == "3b") & (ir["partner"] == "S")).any()
    ph = sig.posthoc(df)
    s_pairs = set(zip(ph.loc[ph.partner == "S", "group1"], ph.loc[ph.partner == "S", "group2"]))
    assert s_pairs == {("1", "2"), ("1", "3a"), ("2", "3a")}
    a = sig.anova(df)
    assert set(a["method"]) == {"anova2_no_interaction"}
    assert "anova2 not estimable" in a["note"].iloc[0]


# ------------------------------------------------------------------------------------- ANOVA


def design(
    case_means: dict, partners=("L", "S"), n=10, sd=1.0, seed=0, target="L", metric="gflops", dist="normal"
):
    rng = np.random.default_rng(seed)
    groups = []
    for case, mu in case_means.items():
        for p in partners:
            noise = rng.normal(0, sd, n) if dist == "normal" else rng.lognormal(0, 1.5, n)
            groups.append(rows(case, target, p, mu + noise, metric=metric))
    return frame(*groups)


def test_anova_detects_strong_case_effect():
    a = sig.anova(design({"2": 0.0, "3a": 5.0, "3b": 10.0}))
    case = one(a, term="case")
    assert case["method"] == "anova2"
    assert case["p"] < 0.01 and case["df"] == 2
    assert case["partial_eta_sq"] > 0.9
    assert set(a["term"]) >= {"case", "partner", "case:partner", "Residual"}
    assert one(a, term="Residual")["df"] == 60 - 6
    assert list(a.columns) == st.ANOVA_COLUMNS


def test_a_triples_rows_stay_out_of_the_papers_anova_and_tukey_tests_but_get_their_ir():
    rng = np.random.default_rng(3)
    pairs = design({"2": 0.0, "3a": 5.0, "3b": 10.0})
    triple = frame(
        rows("2", "L", "S+Y", rng.normal(30, 1, 10)), rows("2-3a", "L", "S|Y", rng.normal(40, 1, 10))
    )
    base = frame(rows("1", "L", "", rng.normal(20, 1, 10)))
    both = pd.concat([pairs, triple, base], ignore_index=True)
    assert sig.anova(both).equals(sig.anova(pd.concat([pairs, base])))
    ph = sig.posthoc(both)
    assert set(ph.partner) == {"L", "S"} and "2-3a" not in set(ph.group1) | set(ph.group2)
    ir = st.interference_ratios(both)
    assert {("2", "S+Y"), ("2-3a", "S|Y")} <= set(zip(ir.case, ir.partner))  # the advice's IRs are kept


def test_anova_no_effect_no_huge_F():
    a = sig.anova(design({"2": 0.0, "3a": 0.0, "3b": 0.0}, seed=1))
    case = one(a, term="case")
    assert case["F"] < 10 and case["p"] > 0.01
    assert 0 <= case["partial_eta_sq"] < 0.2
    # Constant values: nothing to test, no F at all (not a huge ratio of rounding noise).
    flat = sig.anova(design({"2": 5.0, "3a": 5.0, "3b": 5.0}, sd=0.0))
    assert list(flat["method"]) == ["not_testable"] and "identical" in flat["note"].iloc[0]
    assert flat["F"].isna().all()


def test_anova_one_way_matches_scipy():
    df = design({"2": 0.0, "3a": 1.0, "3b": 2.0}, partners=("S",), n=6, seed=2)
    a = sig.anova(df)
    case = one(a, term="case")
    assert case["method"] == "anova1_case" and "only partner S" in case["note"]
    groups = [g["value"].to_numpy() for _, g in df.groupby("case")]
    f, p = stats.f_oneway(*groups)
    assert case["F"] == pytest.approx(f) and case["p"] == pytest.approx(p)


def test_anova_one_case_tests_partner():
    df = design({"2": 0.0}, partners=("L", "S", "B"), n=5, seed=4)
    assert set(sig.anova(df)["method"]) <= {"anova1_partner", "kruskal"}
    assert one(sig.anova(df), method="anova1_partner", term="partner")["df"] == 2


def test_anova_degenerate_inputs_have_notes():
    df = frame(
        rows("1", "L", "", [1, 2, 3]),  # only a baseline
        rows("1", "S", "", [1, 2], metric="triad"),
        rows("2", "S", "L", [4], metric="triad"),  # one sample
        rows("2", "B", "L", [None, None], metric="mb"),  # all failed
        rows("2", "Y", "L", [1, 2], metric="ops"),
        rows("3a", "Y", "S", [3, 4], metric="ops"),
    )
    a = sig.anova(df)
    for target in ["L", "S", "B"]:
        r = one(a, target=target)
        assert r["method"] == "not_testable" and r["note"]
    # Y: case and partner are confounded (2 <-> L, 3a <-> S): one-way, said so.
    y = a[a.target == "Y"]
    assert y["method"].iloc[0] == "anova1_case" and "not separable" in y["note"].iloc[0]
    # Never an unexplained empty F or p.
    missing = a["F"].isna() | a["p"].isna()
    assert (a.loc[missing, "note"] != "").all()


def test_kruskal_when_residuals_not_normal():
    df = design({"2": 0.0, "3a": 3.0, "3b": 6.0}, n=15, dist="lognormal", seed=3)
    a = sig.anova(df)
    assert one(a, term="case", method="anova2")["shapiro_p"] < 0.05
    kw = one(a, method="kruskal")
    groups = [g["value"].to_numpy() for _, g in df.groupby("case")]
    h, p = stats.kruskal(*groups)
    assert kw["term"] == "case" and kw["df"] == 2
    assert kw["F"] == pytest.approx(h) and kw["p"] == pytest.approx(p) and kw["p"] < 0.01
    # Normal residuals: no Kruskal-Wallis row.
    normal = sig.anova(design({"2": 0.0, "3a": 3.0, "3b": 6.0}, seed=8))
    assert normal["shapiro_p"].iloc[0] >= 0.05 and "kruskal" not in set(normal["method"])


# ------------------------------------------------------------------------------------ post hoc


def tukey_data(seed=0, n=20):
    rng = np.random.default_rng(seed)
    return frame(
        rows("1", "L", "", rng.normal(10, 1, n)),
        *[
            rows(c, "L", p, rng.normal(15 if c == "3b" else 10, 1, n))
            for c in ["2", "3a", "3b"]
            for p in ["L", "S"]
        ],
    )


def test_tukey_finds_the_shifted_group():
    ph = sig.posthoc(tukey_data())
    assert list(ph.columns) == st.POSTHOC_COLUMNS
    assert len(ph) == 2 * 6  # 2 partners x C(4, 2)
    for r in ph.itertuples():
        assert r.reject == ("3b" in (r.group1, r.group2)), (r.partner, r.group1, r.group2)
    r = one(ph, partner="L", group1="1", group2="3b")
    assert r.meandiff == pytest.approx(5, abs=1) and r.ci_low < r.meandiff < r.ci_high
    assert r.p_adj < 0.001


def test_tukey_matches_statsmodels_pairwise_tukeyhsd():
    """scipy's tukey_hsd (what posthoc uses) gives statsmodels' numbers: the same test."""
    df = tukey_data(seed=9, n=7)
    df = df.drop(index=df.index[:3])  # unequal group sizes
    ph = sig.posthoc(df)
    d = df[(df.case == "1") | (df.partner == "S")]
    ref = pairwise_tukeyhsd(d["value"].to_numpy(), d["case"].to_numpy())
    mine = ph[ph.partner == "S"]
    np.testing.assert_allclose(mine["meandiff"], ref.meandiffs, rtol=1e-10)
    np.testing.assert_allclose(mine["p_adj"], ref.pvalues, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(mine[["ci_low", "ci_high"]], ref.confint, rtol=1e-9)
    assert list(mine["reject"]) == list(ref.reject)


def test_posthoc_degenerate_inputs():
    df = frame(
        rows("1", "L", "", [1, 2, 3]),
        rows("2", "L", "S", [None, None]),  # partner all failed
        rows("1", "S", "", [1, 2, 3], metric="triad"),  # only a baseline
        rows("1", "B", "", [5, 5], metric="mb"),
        rows("2", "B", "L", [7, 7], metric="mb"),
    )
    ph = sig.posthoc(df)
    r = one(ph, target="L")
    assert r["partner"] == "S" and "fewer than 2 groups" in r["note"] and "case 2" in r["note"]
    assert "no concurrent-case samples" in one(ph, target="S")["note"]
    assert "zero within-group variance" in one(ph, target="B")["note"]
    assert ph["p_adj"].isna().all()


# ---------------------------------------------------------------------------- jobs, CLI, I/O


def test_parallel_jobs_give_identical_results():
    """The IR bootstraps and the Tukey families spread over processes give the same tables."""
    df = tukey_data(seed=4, n=10)
    for table in (lambda jobs: st.interference_ratios(df, jobs=jobs), lambda jobs: sig.posthoc(df, jobs)):
        pd.testing.assert_frame_equal(table(1), table(2))


def write_tsv(df: pd.DataFrame, path: Path) -> None:
    df.to_csv(path, sep="\t", index=False, na_rep="")


def run_cli(tmp_path: Path, samples: Path) -> dict[str, Path]:
    """The statistics rule's command: every table of the pair study in one process."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    cmd = [sys.executable, "-m", "interference.steps.statistics", "--study", "pairs"]
    cmd += ["--samples", str(samples), "--out-dir", str(tmp_path / "stats"), "--jobs", "2"]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {p.stem: p for p in sorted((tmp_path / "stats").glob("*.tsv"))}


def test_every_table_comes_after_the_tables_it_needs_and_one_table_alone_is_the_same(tmp_path):
    from interference import studies
    from interference.steps import statistics as step
    from interference.studies.base import WORKFLOW_TABLES

    pairs = studies.get("pairs")
    order = step.in_order(pairs)
    assert sorted(order) == sorted(pairs.tables)
    for i, name in enumerate(order):
        assert all(
            n == "samples" or n in WORKFLOW_TABLES or order.index(n) < i for n in pairs.tables[name].needs
        ), name
    # One table by hand gives the very file the study's job wrote.
    write_tsv(tukey_data(seed=2, n=5), tmp_path / "samples.tsv")
    outs = run_cli(tmp_path, tmp_path / "samples.tsv")
    alone = tmp_path / "alone.tsv"
    argv = ["--study", "pairs", "--table", "interference", "--out", str(alone)]
    assert step.main([*argv, "--input", f"samples={tmp_path / 'samples.tsv'}"]) == 0
    assert alone.read_bytes() == outs["interference"].read_bytes()


def test_tables_whose_needs_cannot_be_met_are_named():
    from types import SimpleNamespace

    from interference.steps import statistics as step

    study = SimpleNamespace(
        name="s",
        tables={"a": SimpleNamespace(needs=("samples",)), "b": SimpleNamespace(needs=("c",)),
                "c": SimpleNamespace(needs=("b",))},
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"\['b', 'c'\]"):
        step.in_order(study)


def test_cli_end_to_end(tmp_path):
    df = tukey_data(seed=1, n=6)
    df = pd.concat([df, frame(rows("2", "L", "S", [None]), rows("3a", "L", "L", [99], in_overlap=False))])
    write_tsv(df, tmp_path / "samples.tsv")
    outs = run_cli(tmp_path, tmp_path / "samples.tsv")
    read = {
        k: pd.read_csv(
            p,
            sep="\t",
            dtype={"case": str, "partner": str, "group1": str, "group2": str},
            keep_default_na=False,
            na_values=[""],
        )
        for k, p in outs.items()
    }
    assert list(read["summary"].columns) == st.SUMMARY_COLUMNS
    assert list(read["interference"].columns) == st.INTERFERENCE_COLUMNS
    assert list(read["anova"].columns) == st.ANOVA_COLUMNS
    assert list(read["posthoc"].columns) == st.POSTHOC_COLUMNS
    s = read["summary"]
    assert len(s) == 7 and set(s["case"]) == {"1", "2", "3a", "3b"}
    r = s[(s.case == "2") & (s.partner == "S")].iloc[0]
    assert r["n"] == 6 and r["n_excluded_failed"] == 1
    assert s[(s.case == "3a") & (s.partner == "L")].iloc[0]["n_excluded_overlap"] == 1
    i = read["interference"]
    assert len(i) == 6 and i["ir"].notna().all() and (i["ir_ci_method"] == "bootstrap_bca_2000").all()
    assert len(read["posthoc"]) == 12 and "anova2" in set(read["anova"]["method"])


def test_cli_header_only_input(tmp_path):
    cols = list(frame(rows("1", "L", "", [1])).columns)
    (tmp_path / "samples.tsv").write_text("\t".join(cols) + "\n")
    outs = run_cli(tmp_path, tmp_path / "samples.tsv")
    for name, path in outs.items():
        assert path.read_text().count("\n") == 1, name  # header only


def test_read_samples_keeps_ids_as_strings(tmp_path):
    df = frame(rows("1", "NA", "", [1.5, None]), rows("3a", "NA", "NR", [2.0]))
    write_tsv(df, tmp_path / "s.tsv")
    back = st.read_samples(tmp_path / "s.tsv")
    assert list(back["case"]) == ["1", "1", "3a"] and list(back["target"]) == ["NA"] * 3
    assert list(back["partner"]) == ["", "", "NR"]
    assert back["value"].isna().tolist() == [False, True, False]
    s = st.summarize(back)
    assert one(s, case="1")["n_excluded_failed"] == 1


def test_contention_by_case_averages_each_iteration_once_and_sums_the_counters():
    """Two metrics of one iteration count once; shares are averaged over the iterations with a
    value, counters summed; a case where no iteration has a value shows none (not 0)."""
    from interference.studies.pairs.statistics.iteration_telemetry import CASE_COLUMNS, by_case

    def row(case, member, iteration, metric, psi, oom, steal=None):
        return {"host": "h", "runtime": "docker", "case": case, "target": "S", "partner": "L" if case != "1" else "",
                "member": member, "repetition": 1, "iteration": iteration, "metric": metric, "psi_cpu_some": psi,
                "oom_kill": oom, "nr_throttled": 2, "steal_cores": steal}  # fmt: skip

    rows = [row("2", 1, 1, "copy", 0.2, 0, 0.1), row("2", 1, 1, "triad", 0.2, 0, 0.1),  # one iteration
            row("2", 1, 2, "copy", 0.5, 1), row("2", 2, 1, "copy", None, 1),
            row("1", 1, 1, "copy", 0.01, None), row("1", 1, 2, "copy", 0.03, None)]  # fmt: skip
    table = by_case(pd.DataFrame(rows))
    assert list(table.columns) == CASE_COLUMNS and list(table["case"]) == ["1", "2"]
    t = table.set_index("case")
    two = t.loc["2"]
    assert two["n_iterations"] == 3 and two["psi_cpu_some"] == pytest.approx((0.2 + 0.5) / 2)
    assert two["oom_kill"] == 2 and two["nr_throttled"] == 6 and two["steal_cores"] == pytest.approx(0.1)
    one = t.loc["1"]
    assert (
        one["psi_cpu_some"] == pytest.approx(0.02)
        and pd.isna(one["oom_kill"])
        and pd.isna(one["steal_cores"])
    )
    assert pd.isna(one["psi_io_some"])  # a column the telemetry lacks
    assert by_case(pd.DataFrame()).empty


def test_pressure_correlation_is_spearmans_rho_by_hand():
    """Pressure ranks 1..5 against performance ranks 5, 4, 3, 1, 2: without ties Spearman's rho is
    1 - 6 Σd² / (n(n² - 1)); a target with one pressure value gives no row."""
    from interference.studies.pairs.statistics.iteration_telemetry import pressure_correlation

    pressure = [0.1, 0.2, 0.3, 0.4, 0.5]
    perf = [1.0, 0.9, 0.8, 0.6, 0.7]
    rows = [{"host": "h", "runtime": "docker", "case": "2", "target": "L", "relative": r, "psi_cpu_some": p}
            for p, r in zip(pressure, perf)]  # fmt: skip
    rows += [{"host": "h", "runtime": "docker", "case": "3a", "target": "S", "relative": r, "psi_cpu_some": 0.2}
             for r in perf]  # fmt: skip
    rows += [
        {"host": "h", "runtime": "docker", "case": "1", "target": "L", "relative": 9.0, "psi_cpu_some": 0.9}
    ]
    t = pressure_correlation(pd.DataFrame(rows))
    ranks_perf = [5, 4, 3, 1, 2]  # of 1.0, 0.9, 0.8, 0.6, 0.7
    d2 = sum((i + 1 - r) ** 2 for i, r in enumerate(ranks_perf))
    assert list(t["target"]) == ["L"] and t["n"].iloc[0] == 5  # Case 1 is not concurrent
    assert t["rho"].iloc[0] == pytest.approx(1 - 6 * d2 / (5 * (25 - 1)))


def test_a_runs_overhead_is_its_duration_less_its_members_iterations_by_hand():
    """Two Case 1 runs of L (3 iterations of 2 s; 10 s and 12 s in all: 4 and 6 s beyond them)
    and a Case 3b run of L+S (L 3 × 2 s, S 2 × 4 s at once: 11 s, 3 s beyond the longer): L's
    overhead is the median of 4, 6 and 3, S's is 3; a run the runs table lacks is not timed, and
    without runs.tsv the model's overhead stands, which the row says."""
    from interference.studies.pairs.statistics.variance import variance_components

    def its(case, target, partner, rep, member, n, seconds, t0=0.0):
        return [
            dict(
                host="h",
                runtime="docker",
                case=case,
                target=target,
                partner=partner,
                repetition=rep,
                member=member,
                iteration=i,
                metric="m",
                value=10.0 + i + rep,
                unit="s",
                higher_is_better=False,
                start=t0 + i * seconds,
                end=t0 + (i + 1) * seconds,
                in_overlap=True,
                status="ok",
            )  # fmt: skip
            for i in range(n)
        ]

    df = pd.DataFrame(
        its("1", "L", "", 1, 1, 3, 2.0) + its("1", "L", "", 2, 1, 3, 2.0)
        + its("3b", "L", "S", 1, 1, 3, 2.0) + its("3b", "S", "L", 1, 2, 2, 4.0)
        + its("3b", "L", "S", 2, 1, 3, 2.0)  # not in the runs table
    )  # fmt: skip
    runs = pd.DataFrame(
        [("h", "docker", "case1/L", 1, 10.0), ("h", "docker", "case1/L", 2, 12.0), ("h", "docker", "case3b/L+S", 1, 11.0),
         ("h", "docker", "case1-end/L", 1, 99.0)],
        columns=["host", "runtime", "key", "repetition", "duration_s"],
    ).assign(pair=lambda d: d["key"].str.split("/").str[1], case="1")  # fmt: skip
    out = variance_components(df, runs).set_index("target")
    assert out.loc["L", "run_overhead_s"] == pytest.approx(4.0)
    assert out.loc["S", "run_overhead_s"] == pytest.approx(3.0)
    assert out.loc["L", "run_overhead_from"] == "measured: the median of 3 runs"
    model = variance_components(df).set_index("target")
    assert (
        model.loc["L", "run_overhead_from"] == "model: no run timed" and model.loc["L", "run_overhead_s"] < 2
    )


def test_where_the_limit_and_the_partner_pull_against_each_other_the_split_says_which_wins():
    from interference.studies.pairs.statistics import limit_partner as lp

    # A 10 % gain against Case 1 while the partner alone costs 5 %: the limit's removal wins;
    # the reverse; within ±2 % either way nothing is said.
    assert lp.opposed(0.10, -0.05) == lp.LIMIT_OUTWEIGHS
    assert lp.opposed(-0.10, 0.05) == lp.PARTNER_OUTWEIGHS
    assert lp.opposed(0.10, -0.02) == lp.opposed(0.02, -0.10) == lp.opposed(-0.10, -0.05) == ""
    assert "opposed" in lp.COLUMNS
