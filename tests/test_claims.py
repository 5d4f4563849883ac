"""Combining cells and reading a claim with its quantifier, against independent calculations:
the covariance of cells that share a baseline written out as a matrix with numpy, Welch and
Satterthwaite's degrees of freedom by their formula, the one-sided tests by scipy's t
distribution directly, Paule and Mandel's tau² solved with a root finder and the HKSJ interval
by its formula, and small sets of cells whose verdict under each quantifier can be read off by
eye. How often the rules err is tests/test_verdict_calibration.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from interference.findings import claims as c
from interference.findings import inference as inf
from interference.findings import pooling
from interference.findings import verdict as v
from scipy import optimize, stats

Z = stats.norm.ppf(0.975)


# -- combining cells --------------------------------------------------------------------------------


def cell(label, est, se_own, se_base=0.0, base="L", df=8.0, level=inf.RUNS):
    se = math.hypot(se_own, se_base)
    shared = ((("baseline", base), se_base, df),) if se_base else ()
    q = stats.t.ppf(0.975, df)
    return inf.CellEstimate(label, est, est - q * se, est + q * se, se, df, level, shared, base)


def test_a_mean_over_cells_sharing_a_baseline_has_the_covariance_matrixs_variance():
    # Three IRs of L (one baseline, df 8) and one of S (its own baseline, df 20).
    cells = [cell("a", -0.2, 0.03, 0.02), cell("b", -0.1, 0.04, 0.025), cell("c", -0.3, 0.02, 0.02),
             cell("d", 0.05, 0.01, 0.01, base="S", df=20)]  # fmt: skip
    base = np.array([0.02, 0.025, 0.02, 0.0])
    s_base = np.array([0, 0, 0, 0.01])
    V = np.diag([0.03**2, 0.04**2, 0.02**2, 0.01**2]) + np.outer(base, base) + np.outer(s_base, s_base)
    w = np.full(4, 0.25)
    m = inf.mean_of(cells)
    assert m.estimate == pytest.approx(np.mean([-0.2, -0.1, -0.3, 0.05]))
    assert m.se == pytest.approx(math.sqrt(w @ V @ w))
    # Satterthwaite over the four variance estimates the parts come from: L's concurrent side's
    # and L's baseline's (df 8 each), S's two (df 20).
    own_l = np.sum(w[:3] ** 2 * np.array([0.03, 0.04, 0.02]) ** 2)
    base_l = (w[:3] @ base[:3]) ** 2
    own_s = base_s = (0.25 * 0.01) ** 2
    pieces = [(own_l, 8), (base_l, 8), (own_s, 20), (base_s, 20)]
    total = sum(p for p, _ in pieces)
    satterthwaite = total**2 / sum(p * p / d for p, d in pieces)
    # ... never more than the largest piece's df (L's baseline here: df 8).
    assert max(pieces)[0] == base_l and satterthwaite > 8
    assert m.df == pytest.approx(min(satterthwaite, 8))
    # Taken as independent, the same cells' SE would be too small.
    assert math.sqrt(w @ np.diag(np.diag(V)) @ w) < m.se


def test_a_difference_of_two_cases_of_one_target_cancels_their_baseline():
    a, b = cell("3a", -0.1, 0.03, 0.04), cell("2", -0.25, 0.02, 0.04)
    d = inf.linear([a, b], [1, -1], "3a - 2")
    assert d.estimate == pytest.approx(0.15)
    assert d.se == pytest.approx(math.hypot(0.03, 0.02))  # the baseline's 0.04 cancels
    # The two half-widths in quadrature (what the contrast used to take) is wider.
    assert math.hypot(a.sd, b.sd) > d.se * 1.5
    # Groups of cells: mean(a) - mean(b) with the shared baseline cancelling too.
    g = inf.difference([a, cell("3a'", -0.12, 0.03, 0.04)], [b])
    assert g.se == pytest.approx(math.sqrt((0.03**2 + 0.03**2) / 4 + 0.02**2))


def test_a_cell_without_an_se_takes_it_from_its_ci_and_one_cell_is_itself():
    c1 = inf.CellEstimate("x", 0.1, 0.1 - 2.306 * 0.02, 0.1 + 2.306 * 0.02, df=8)
    assert c1.sd == pytest.approx(0.02, rel=1e-3)
    normal = inf.CellEstimate("x", 0.1, 0.1 - Z * 0.02, 0.1 + Z * 0.02)
    m = inf.mean_of([normal])
    assert (m.estimate, m.se) == pytest.approx((0.1, 0.02))
    assert m.interval() == pytest.approx((0.1 - 1.6449 * 0.02, 0.1 + 1.6449 * 0.02), rel=1e-4)


def test_one_sided_p_values_are_scipys_t_tails():
    # below -5 %: estimate -0.12, se 0.03, df 8: inside by (−0.05 − (−0.12)) / 0.03 SEs.
    assert inf.p_inside(-0.12, 0.03, 8, -math.inf, -0.05) == pytest.approx(stats.t.sf(0.07 / 0.03, 8))
    assert inf.p_outside(-0.12, 0.03, 8, -math.inf, -0.05) == pytest.approx(stats.t.cdf(0.07 / 0.03, 8))
    # Two edges: TOST takes the larger p; refuting takes the smaller, Bonferroni over two.
    p = inf.p_inside(0.02, 0.01, 10, -0.05, 0.05)
    assert p == pytest.approx(max(stats.t.sf(0.07 / 0.01, 10), stats.t.sf(0.03 / 0.01, 10)))
    p = inf.p_outside(0.09, 0.01, 10, -0.05, 0.05)
    assert p == pytest.approx(2 * stats.t.sf(0.04 / 0.01, 10))


def test_the_t_quantile_and_tail_are_scipy_stats_t_at_any_df():
    # inference uses scipy.special (the Snakefile imports it; scipy.stats costs a second a start).
    for df in (0.5, 1, 2.7, 8, 37.3, 1e6, math.inf):
        for p in (0.025, 0.5, 0.95, 0.975):
            assert inf.quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-12)
        for x in (-3.1, -0.4, 0.0, 1.7, 6.0):
            assert inf.survival(x, df) == pytest.approx(stats.t.sf(x, df), rel=1e-12, abs=1e-300)


def test_the_settle_factors_probability_is_a_monte_carlo_of_the_runs_it_adds():
    margin, se, df, alpha = 0.05, 0.03, 8, 0.05
    f = inf.runs_factor(margin, se, df, alpha, 0.9)
    assert 1 < f < inf.MAX_RUNS_FACTOR
    # Given the data: the value ~ N(estimate, se²); the new runs' mean ~ N(value, se²/(f - 1)).
    rng = np.random.default_rng(11)
    value = margin + se * rng.standard_normal(200_000)
    new = value + se / math.sqrt(f - 1) * rng.standard_normal(value.size)
    final = (margin + (f - 1) * new) / f
    passed = final / (se / math.sqrt(f)) > stats.t.ppf(1 - alpha, df * f)
    assert passed.mean() == pytest.approx(0.9, abs=0.005)
    # An estimate within z(0.9) SEs of the edge: no factor is likely to decide it.
    assert inf.runs_factor(1.0 * se, se, df, alpha, 0.9) == math.inf


# -- heterogeneity (the report's) ---------------------------------------------------------------


def paule_mandel_hksj(y, se):
    """tau² solving the generalised Q = k - 1 (Paule and Mandel 1982), then the HKSJ interval
    (Hartung and Knapp 2001) with its scale floored at 1, by their formulas."""
    y, v_ = np.asarray(y, float), np.asarray(se, float) ** 2
    k = len(y)

    def q(t2):
        w = 1 / (v_ + t2)
        mu = np.sum(w * y) / np.sum(w)
        return np.sum(w * (y - mu) ** 2) - (k - 1)

    tau2 = 0.0 if q(0) <= 0 else optimize.brentq(q, 0, 10)
    w = 1 / (v_ + tau2)
    mu = np.sum(w * y) / np.sum(w)
    scale = max(1.0, np.sum(w * (y - mu) ** 2) / (k - 1))
    half = stats.t.ppf(0.975, k - 1) * math.sqrt(scale / np.sum(w))
    return mu, tau2, (mu - half, mu + half)


def cis(y, se):
    return [x - Z * s for x, s in zip(y, se)], [x + Z * s for x, s in zip(y, se)]


def test_the_heterogeneity_is_paule_and_mandels_with_the_hksj_interval_by_hand():
    y = [0.12, -0.05, 0.30, 0.08, 0.02]  # five cells that disagree beyond their own noise
    se = [0.03, 0.02, 0.05, 0.04, 0.02]
    p = pooling.random_effects(y, *cis(y, se))
    mu, tau2, (low, high) = paule_mandel_hksj(y, se)
    assert (p.estimate, p.tau2, p.low, p.high) == pytest.approx((mu, tau2, low, high), rel=1e-4)
    assert tau2 > 0 and p.pred_high - p.pred_low > p.high - p.low  # a new cell varies more
    agree = pooling.random_effects([0.10, 0.11, 0.09], *cis([0.10, 0.11, 0.09], [0.02] * 3))
    assert agree.tau2 == 0 and math.isnan(agree.pred_low)  # 3 cells: no prediction interval
    # Cells agreeing by chance: the scale floored at 1 keeps the fixed-effect width, t(2).
    assert agree.high - agree.low == pytest.approx(2 * stats.t.ppf(0.975, 2) * 0.02 / math.sqrt(3))


# -- the quantifiers ----------------------------------------------------------------------------------


def measure(cells, n=10):
    by_cell = tuple(cell(f"cell {i}", e, s, base=f"t{i}") for i, (e, s) in enumerate(cells))
    return v.Measure.of(inf.mean_of(by_cell), "q", n, cells=len(by_cell), by_cell=by_cell)


BELOW = v.Band.of({"below": -0.05})
# Cells (estimate, se), df 8: clearly below -5 %, clearly above, straddling.
LOSS, GAIN, OPEN = (-0.2, 0.02), (0.1, 0.02), (-0.07, 0.02)


@pytest.mark.parametrize(
    ("quantifier", "cells", "want", "held"),
    [
        ("every", [LOSS, LOSS, LOSS], v.REPRODUCED, "3 of 3 cells"),
        ("every", [LOSS, LOSS, GAIN], v.NOT_REPRODUCED, "2 of 3 cells (1 conclusively outside)"),
        ("every", [LOSS, OPEN], v.INCONCLUSIVE, "1 of 2 cells"),
        ("most", [LOSS, LOSS, GAIN], v.REPRODUCED, "2 of 3 cells (1 conclusively outside)"),
        ("most", [LOSS, GAIN, GAIN], v.NOT_REPRODUCED, "1 of 3 cells (2 conclusively outside)"),
        ("most", [LOSS, OPEN, GAIN, OPEN], v.INCONCLUSIVE, "1 of 4 cells (1 conclusively outside)"),
        ("some", [GAIN, GAIN, LOSS], v.REPRODUCED, "1 of 3 cells (2 conclusively outside)"),
        ("some", [GAIN, GAIN], v.NOT_REPRODUCED, "0 of 2 cells (2 conclusively outside)"),
        ("mean", [LOSS, LOSS, LOSS], v.REPRODUCED, "3 of 3 cells"),
        ("mean", [LOSS, LOSS, GAIN, GAIN], v.INCONCLUSIVE, "2 of 4 cells (2 conclusively outside)"),
    ],
)
def test_each_quantifier_reads_the_cells_as_its_word_says(quantifier, cells, want, held):
    j = c.judge_claim(measure(cells), BELOW, quantifier)
    assert (j.verdict, j.holds_in) == (want, held), j.reason


def test_every_is_refuted_at_alpha_over_n_and_confirmed_cell_by_cell_at_alpha():
    # A cell 2.5 SEs above the edge: p = t.sf(2.5, 8) = 0.018, below 0.05 / 2 but not 0.05 / 4.
    above = (-0.05 + 2.5 * 0.02, 0.02)
    p = stats.t.sf(2.5, 8)
    assert 0.05 / 4 < p < 0.05 / 2
    assert c.judge_claim(measure([LOSS, above]), BELOW, "every").verdict == v.NOT_REPRODUCED
    j = c.judge_claim(measure([LOSS, LOSS, LOSS, above]), BELOW, "every")
    assert j.verdict == v.INCONCLUSIVE and "3 inside, 0 outside" in j.reason
    # Confirming: each cell at 0.05 (one-sided), no adjustment (an intersection-union test).
    inside = (-0.05 - 1.9 * 0.02, 0.02)  # t.sf(1.9, 8) = 0.047
    assert c.judge_claim(measure([inside] * 6), BELOW, "every").verdict == v.REPRODUCED


def test_some_picks_its_best_cell_at_alpha_over_n():
    inside = (-0.05 - 2.5 * 0.02, 0.02)  # p = 0.018: enough alone, not as the best of four
    assert c.judge_claim(measure([inside]), BELOW, "some").verdict == v.REPRODUCED
    j = c.judge_claim(measure([inside, GAIN, GAIN, GAIN]), BELOW, "some")
    assert j.verdict == v.INCONCLUSIVE
    # The interval shown is the best cell's at the adjusted level: two-sided 1 - 2·0.05/4.
    q = stats.t.ppf(1 - 0.05 / 4, 8)
    assert (j.shown.low, j.shown.high) == pytest.approx((inside[0] - q * 0.02, inside[0] + q * 0.02))


def test_every_shows_the_cell_that_decides():
    j = c.judge_claim(measure([LOSS, (-0.1, 0.01), GAIN]), BELOW, "every")
    assert j.shown.estimate == GAIN[0] and "cell 2" in j.shown.what and "cell 2" in j.reason


def test_an_open_verdict_says_how_many_times_the_runs_would_settle_it():
    j = c.judge_claim(measure([(-0.1, 0.03)]), BELOW, "mean")
    want = inf.runs_factor(0.05, 0.03, 8, 0.05, c.ASSURANCE)
    assert j.verdict == v.INCONCLUSIVE and j.settle_factor == pytest.approx(want)
    assert j.settle.startswith(f"about {math.ceil(want * 10) / 10:g}× the runs per cell")
    near = c.judge_claim(measure([(-0.055, 0.03)]), BELOW, "mean")
    assert near.settle == c.NO_SETTLE and math.isinf(near.settle_factor)


def test_the_samples_gate_applies_where_the_level_is_not_stated_not_to_runs():
    """Three runs of one long iteration a side: a runs-level interval whose df counts them is
    judged; the same samples under an interval whose level its table does not state are not."""
    runs = c.judge_claim(measure([(-0.2, 0.02)], n=3), BELOW, "mean")
    assert runs.verdict == v.REPRODUCED, runs.reason
    unstated = cell("unstated", -0.2, 0.02, level="")
    m = v.Measure.of(inf.mean_of([unstated]), "q", 3, by_cell=(unstated,))
    few = c.judge_claim(m, BELOW, "mean")
    assert few.verdict == v.INCONCLUSIVE and "at least 5 samples" in few.settle
    assert v.too_few_samples(3, "") and not v.too_few_samples(3, v.RUNS) and not v.too_few_samples(5, "")


def test_no_verdict_without_a_runs_level_interval():
    one_run = cell("one run", -0.3, 0.01, level=inf.ITERATIONS)
    m = v.Measure.of(inf.mean_of([one_run]), "q", 10, by_cell=(one_run,))
    j = c.judge_claim(m, BELOW, "mean")
    assert j.verdict == v.INCONCLUSIVE and "iterations only" in j.reason and "2 runs a cell" in j.settle


# -- the scale a cell is tested on ------------------------------------------------------------------


def log_cell(ir, se_log, df, sign):
    """A ratio's IR whose 95 % interval was made on log(ratio), as interference.tsv makes it
    (SE on the IR's scale: the ratio times the log ratio's)."""
    ratio = 1 + sign * ir
    q = stats.t.ppf(0.975, df)
    low, high = sorted(sign * (ratio * math.exp(s * q * se_log) - 1) for s in (-1, 1))
    return inf.CellEstimate("log", ir, low, high, ratio * se_log, df, inf.RUNS, log_sign=sign)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_ratio_cell_is_tested_on_the_log_scale_its_interval_was_made_on(sign):
    """By hand: the one-sided p of "outside below -25 %" is t's tail of (log(1 + sign*edge) -
    log ratio)/se on log(ratio), mirrored where lower is better; the symmetric reading of the same
    SE on the IR's scale gives another p; the 90 % interval shown is exp(log ratio ± t·se)."""
    ir, se_log, df = -0.32, 0.05, 6
    ratio = 1 + sign * ir
    band = v.Band.of({"below": -0.25})
    got = log_cell(ir, se_log, df, sign)
    # IR = sign·(ratio - 1) grows with sign·log(ratio): the edge maps to sign·log(1 + sign·edge).
    g, edge = sign * math.log(ratio), sign * math.log(1 + sign * -0.25)
    want = stats.t.sf((edge - g) / se_log, df)
    symmetric = stats.t.sf((-0.25 - ir) / (ratio * se_log), df)
    assert c.p_values(got, band)[0] == pytest.approx(want)
    assert abs(want - symmetric) > 0.002  # the two readings differ here
    q = stats.t.ppf(0.95, df)
    ends = sorted(sign * (ratio * math.exp(s * q * se_log) - 1) for s in (-1, 1))
    assert got.interval() == pytest.approx(ends)
    # A measure of this one cell keeps its scale and shows the table's 95 % interval.
    m = v.Measure.of(inf.mean_of([got]), "q", 10, by_cell=(got,))
    assert (m.low, m.high) == pytest.approx((got.low, got.high)) and m.log_sign == sign
    verdict, reason = v.judge(m, band)
    assert f"p = {want:.2g}" in reason or verdict == v.INCONCLUSIVE


def test_a_verdict_near_the_edge_follows_the_log_scale():
    """Gains against "above +20 %" with a log SE of 0.052 (6 df, t = 1.943), by hand. At 31 %
    neither reading decides: the 90 % interval's low end is 0.31 - 1.943·1.31·0.052 = 0.178 on
    the IR's scale, 1.31·exp(-1.943·0.052) - 1 = 0.184 on log(ratio). At 33 % the log reading's
    low end is 1.33·0.904 - 1 = 0.202 (reproduced), the symmetric one's 0.196 (inconclusive)."""
    band = v.Band.of({"above": 0.2})
    for ir, want_log, want_sym in (
        (0.31, v.INCONCLUSIVE, v.INCONCLUSIVE),
        (0.33, v.REPRODUCED, v.INCONCLUSIVE),
    ):
        cell_ = log_cell(ir, 0.052, 6, 1)
        sym = inf.CellEstimate("sym", ir, cell_.low, cell_.high, cell_.se, 6, inf.RUNS)
        got = [c.judge_claim(v.Measure.of(inf.mean_of([x]), "q", 10, by_cell=(x,)), band, "mean").verdict
               for x in (cell_, sym)]  # fmt: skip
        assert got == [want_log, want_sym], (ir, got)


def test_cells_of_both_directions_in_one_claim_are_each_tested_on_their_own_scale():
    """A loss of L's rate (higher is better) and of Y's time (lower is better) against "below
    -10 %": each cell's p is its own log-scale p, and the settle factor is computed."""
    up, down = log_cell(-0.3, 0.04, 8, 1), log_cell(-0.3, 0.04, 8, -1)
    band = v.Band.of({"below": -0.1})
    for x in (up, down):
        g, edge = x.log_sign * math.log(1 + x.log_sign * -0.3), x.log_sign * math.log(1 + x.log_sign * -0.1)
        assert c.p_values(x, band)[0] == pytest.approx(stats.t.sf((edge - g) / 0.04, 8))
    j = c.judge_claim(
        v.Measure.of(inf.mean_of([up, down]), "q", 10, cells=2, by_cell=(up, down)), band, "every"
    )
    assert j.verdict == v.REPRODUCED, j.reason
