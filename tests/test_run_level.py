"""stats/run_level.py: a ratio's interval over runs where both sides have 2 runs or more, over one
run's iterations otherwise (and then labelled so, for the findings to decide nothing on it)."""

import math

import numpy as np
import pytest
from interference.rendering.kit.format import interval_level
from interference.stats.run_level import ITERATIONS, RUNS, ratio_at_level, run_sd
from scipy import stats


def test_a_balanced_runs_interval_is_the_run_means_t_interval_by_hand():
    # 3 runs of 2 iterations a side: the SE of a side's mean is its run means' SD over sqrt(3)
    # (relative to its mean), the interval t with Welch's df on the log scale.
    x = np.array([81.0, 79.0, 84.0, 83.0, 77.0, 78.0])
    b = np.array([100.0, 101.0, 97.0, 99.0, 103.0, 104.0])
    runs = [1, 1, 2, 2, 3, 3]
    r = ratio_at_level(x, runs, b, runs, 1000, 1, ("k",))
    mx, mb = x.reshape(3, 2).mean(1), b.reshape(3, 2).mean(1)
    vx, vb = (mx.std(ddof=1) / mx.mean()) ** 2 / 3, (mb.std(ddof=1) / mb.mean()) ** 2 / 3
    df = (vx + vb) ** 2 / (vx**2 / 2 + vb**2 / 2)
    half = stats.t.ppf(0.975, df) * math.sqrt(vx + vb)
    ratio = x.mean() / b.mean()
    assert (r.level, r.runs, r.baseline_runs, r.method) == (RUNS, 3, 3, "runs_t_welch")
    assert r.ratio == pytest.approx(ratio)
    assert r.df == pytest.approx(df)
    assert (r.low, r.high) == pytest.approx((ratio * math.exp(-half), ratio * math.exp(half)))
    assert run_sd(x, runs) == pytest.approx(mx.std(ddof=1))
    # One value a run: the run means are the values.
    one = ratio_at_level(mx, [1, 2, 3], mb, [1, 2, 3], 1000, 1, ("k",))
    assert one.level == RUNS and (one.low, one.high) == pytest.approx((r.low, r.high))
    assert math.isnan(run_sd(x, [1] * 6))


def test_one_run_a_side_gives_a_bootstrap_over_its_iterations_labelled_so():
    x, b = [80.0, 81, 79, 80, 82, 78], [100.0, 101, 99, 100, 102, 98]
    r = ratio_at_level(x, [1] * 6, b, [1, 1, 1, 2, 2, 2], 1000, 1, ("k",))
    assert r.level == ITERATIONS and r.method.startswith("bootstrap") and math.isnan(r.df)
    assert "iterations only" in r.note and r.low < 0.8 < r.high
    few = ratio_at_level([80.0], [1], b, [1] * 6, 1000, 1, ("k",))
    assert few.level == "" and math.isnan(few.low) and "fewer than 2" in few.note


def test_the_runs_interval_covers_where_runs_vary_and_one_runs_iterations_do_not():
    """A simulation of our own design: each run has its own level (SD 5 %) on top of its
    iterations' noise (CV 3 %), the true ratio 0.8. Over runs (3 a side) the interval covers
    about 95 %; one run's iterations (6 a side) cover far less, which is why no verdict rests on
    them."""
    rng = np.random.default_rng(52)

    def side(level, n_runs, per_run):
        runs = np.repeat(np.arange(n_runs), per_run)
        run_level = level * (1 + 0.05 * rng.standard_normal(n_runs))
        return run_level[runs] * (1 + 0.03 * rng.standard_normal(runs.size)), runs

    covered_runs, n_runs = 0, 400
    for i in range(n_runs):
        (x, rx), (b, rb) = side(80.0, 3, 2), side(100.0, 3, 2)
        r = ratio_at_level(x, rx, b, rb, 1000, i, ("sim",))
        covered_runs += r.low <= 0.8 <= r.high
    covered_its, n_its = 0, 60
    for i in range(n_its):
        (x, rx), (b, rb) = side(80.0, 1, 6), side(100.0, 1, 6)
        r = ratio_at_level(x, rx, b, rb, 500, i, ("sim",))
        covered_its += r.low <= 0.8 <= r.high
    assert 0.91 <= covered_runs / n_runs <= 0.99, covered_runs / n_runs
    assert covered_its / n_its < 0.6, covered_its / n_its


def test_the_captions_say_what_the_intervals_cover_from_the_table():
    import pandas as pd

    assert interval_level(pd.DataFrame({"ci_level": ["runs", "runs"]})) == "over runs"
    both = interval_level(pd.DataFrame({"ci_level": ["runs", "iterations", ""]}))
    assert both.startswith("over runs or from a bootstrap over one run's iterations")
    assert interval_level(pd.DataFrame({"ratio": [1.0]})) == "from a bootstrap"


def test_cells_of_the_same_runs_are_averaged_as_perfectly_correlated():
    """Ping-pong's sizes run interleaved in the same runs: the mean's SE is the mean of the
    cells' SEs (the widest it can be), not the independent cells' sqrt(sum of squares) / k."""
    from interference.findings.inference import CellEstimate, correlated_mean, mean_of

    cells = [CellEstimate("a", 0.8, 0.7, 0.9, se=0.01, df=4), CellEstimate("b", 0.6, 0.5, 0.7, se=0.03, df=4)]
    assert correlated_mean(cells, "mean", "sizes").sd == pytest.approx(0.02)
    assert mean_of(cells).sd == pytest.approx(math.sqrt(0.01**2 + 0.03**2) / 2)
    assert correlated_mean(cells, "mean", "sizes").estimate == pytest.approx(0.7)


def test_the_changes_step_judges_nothing_on_one_runs_iterations_either():
    """steps/changes_ratios.py compares sessions' relative.tsv rows; this level is among those
    that leave out what runs add, so no 'changed' rests on it."""
    from interference.findings import inference
    from interference.stats.session_variance import WITHIN_ONE_RUN

    assert ITERATIONS in WITHIN_ONE_RUN and RUNS not in WITHIN_ONE_RUN
    assert (inference.RUNS, inference.ITERATIONS) == (RUNS, ITERATIONS)  # one vocabulary
