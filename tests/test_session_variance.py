"""The variance between sessions and the change intervals that carry it (session_variance.py),
each against an independent calculation: hand arithmetic, scipy's Welch test, statsmodels'
mixed model, and simulated sessions whose truth is known."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from interference.stats import session_variance as sv
from scipy import stats


def test_excess_variance_by_hand():
    # Cell 1: values 1.0, 1.1, 0.9 (variance 0.01), errors 0.002 each -> excess 0.008, weight 2.
    # Cell 2: 2.0, 2.2 (variance 0.02), errors 0.004 and 0.006 -> excess 0.015, weight 1.
    # A cell in one session gives nothing.
    cells = [
        (np.array([1.0, 1.1, 0.9]), np.array([0.002, 0.002, 0.002])),
        (np.array([2.0, 2.2]), np.array([0.004, 0.006])),
        (np.array([5.0]), np.array([0.1])),
    ]
    b = sv.excess_variance(cells)
    # Three sessions at most: 2 df, however many cells share them.
    assert b.df == 2 and b.var == pytest.approx((2 * 0.008 + 1 * 0.015) / 3)
    # Sessions that agree better than their errors say: truncated at 0, the df kept.
    assert sv.excess_variance([(np.array([1.0, 1.0]), np.array([0.5, 0.5]))]) == sv.Between(0.0, 1)
    assert sv.excess_variance([]) == sv.NONE


def test_satterthwaite_is_welchs_df():
    rng = np.random.default_rng(1)
    x, y = rng.normal(10, 1, 7), rng.normal(10, 3, 12)
    parts = [(x.var(ddof=1) / x.size, x.size - 1), (y.var(ddof=1) / y.size, y.size - 1)]
    welch = stats.ttest_ind(x, y, equal_var=False)
    assert sv.satterthwaite(parts) == pytest.approx(welch.df)
    assert sv.satterthwaite([(0.1, math.inf), (0.0, 3)]) == math.inf  # normal parts only
    assert sv.satterthwaite([(0.1, math.inf), (0.2, 0)]) == 0.0  # a variance with no df: no interval


def test_the_relative_change_interval_by_hand():
    now, then = sv.MeanError(0.0004, 10, sv.RUNS), sv.MeanError(0.0009, 10, sv.RUNS)
    between = sv.Between(0.0002, 4)
    low, high, df = sv.relative_change_ci(90.0, now, 100.0, then, between, higher=True)
    v = [0.0004, 0.0009, 0.0004]
    df_hand = sum(v) ** 2 / (0.0004**2 / 10 + 0.0009**2 / 10 + 0.0004**2 / 4)
    t = stats.t.ppf(0.975, df_hand)
    se = math.sqrt(sum(v))
    assert df == pytest.approx(df_hand)
    assert (low, high) == pytest.approx((0.9 * math.exp(-t * se) - 1, 0.9 * math.exp(t * se) - 1))
    # Lower is better: 90 against 100 is a gain of 10 %, the bounds mirrored.
    low2, high2, _ = sv.relative_change_ci(90.0, now, 100.0, then, between, higher=False)
    assert (low2, high2) == pytest.approx((-high, -low))


def _sessions(rng, k, cells, session_sd, run_sd, iteration_sd, runs=3, iterations=4):
    """k sessions of `cells` cells (levels 10, 20, ...): each session shifts every cell by its own
    relative effect, each run by its own, each iteration by its own."""
    out = []
    for _ in range(k):
        s = rng.normal(0, session_sd)
        out.append(
            {
                (str(c),): [
                    10.0
                    * (c + 1)
                    * (1 + s + rng.normal(0, run_sd))
                    * (1 + rng.normal(0, iteration_sd, iterations))
                    for _ in range(runs)
                ]
                for c in range(cells)
            }
        )
    return out


def _summaries(sessions):
    subject = lambda key: ()  # noqa: E731 - every cell one subject
    return [
        ({k: np.concatenate(v).mean() for k, v in runs.items()}, sv.cell_errors(runs, subject))
        for runs in sessions
    ], subject


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_the_variance_between_sessions_matches_a_mixed_model():
    """Balanced sessions of one cell: the method of moments against statsmodels' REML variance of
    a session random effect (relative to the level), both over the same run means."""
    rng = np.random.default_rng(7)
    sessions = _sessions(rng, k=12, cells=1, session_sd=0.03, run_sd=0.01, iteration_sd=0.002, runs=4)
    found, subject = _summaries(sessions)
    ours = sv.between_sessions(found, subject)[()]
    rows = [{"session": i, "y": run.mean()} for i, runs in enumerate(sessions) for run in runs[("0",)]]
    df = pd.DataFrame(rows)
    df["y"] /= df["y"].mean()
    reml = smf.mixedlm("y ~ 1", df, groups=df["session"]).fit(reml=True)
    assert ours.df == 11
    assert ours.var == pytest.approx(float(reml.cov_re.iloc[0, 0]), rel=0.02)


def test_with_the_variance_between_sessions_identical_sessions_are_rarely_called_changed():
    """Simulated sessions with a session effect of 3 % and nothing changed: judged against one
    session by its runs alone, the 95 % intervals miss the truth often; with the variance between
    three saved sessions they cover it about 95 % of the time and a 5 % threshold calls at most
    5 % of cells changed."""
    rng = np.random.default_rng(20261125)
    covered = {False: 0, True: 0}
    alarms = {False: 0, True: 0}
    trials = 300
    for _ in range(trials):
        saved = _sessions(rng, k=3, cells=6, session_sd=0.03, run_sd=0.01, iteration_sd=0.01)
        today = _sessions(rng, k=1, cells=6, session_sd=0.03, run_sd=0.01, iteration_sd=0.01)[0]
        found, subject = _summaries(saved)
        between = sv.between_sessions(found, subject)[()]
        now_err = sv.cell_errors(today, subject)
        means, errors = found[0]
        key = ("2",)
        a = np.concatenate(today[key]).mean()
        for pooled in (False, True):
            low, high, _ = sv.relative_change_ci(
                a, now_err[key], means[key], errors[key], between if pooled else sv.NONE, higher=True
            )
            covered[pooled] += low <= 0 <= high
            alarms[pooled] += low > 0.05 or high < -0.05
    assert covered[True] / trials >= 0.9
    assert covered[False] / trials < 0.6
    assert alarms[True] / trials <= 0.05 < alarms[False] / trials


def test_cell_errors_say_which_levels_they_cover():
    runs = {("a",): [np.array([1.0, 1.1, 0.9]), np.array([1.3, 1.2, 1.4])], ("b",): [np.array([2.0, 2.1])]}
    e = sv.cell_errors(runs, lambda key: ())
    assert e[("a",)].level == sv.RUNS and e[("b",)].level == sv.RUNS and e[("a",)].df == 1
    one = sv.cell_errors({("a",): [np.array([1.0, 1.1, 0.9])]}, lambda key: ())[("a",)]
    rel = np.array([1.0, 1.1, 0.9]) / 1.0
    assert (one.level, one.df) == (sv.ITERATIONS, 2)
    assert one.var == pytest.approx(rel.var(ddof=1) / 3)
