"""Pooling cells (a random-effects mean) and reading a claim with its quantifier, against hand
calculations: DerSimonian and Laird's estimator and Higgins's prediction interval written out
with numpy, Bonferroni's widening by its formula, and small sets of cells whose verdict under
each quantifier can be read off by eye."""

from __future__ import annotations

import math

import numpy as np
import pytest
from interference.findings import claims as c
from interference.findings import pooling
from interference.findings import verdict as v
from scipy import stats

Z = stats.norm.ppf(0.975)


def dersimonian_laird(y, se):
    """The textbook formulas (Borenstein et al., Introduction to Meta-Analysis, ch. 12 and 17)."""
    y, w = np.asarray(y, float), 1 / np.asarray(se, float) ** 2
    fixed = np.sum(w * y) / np.sum(w)
    q = np.sum(w * (y - fixed) ** 2)
    df = len(y) - 1
    tau2 = max(0.0, (q - df) / (np.sum(w) - np.sum(w**2) / np.sum(w)))
    w_star = 1 / (1 / w + tau2)
    mu = np.sum(w_star * y) / np.sum(w_star)
    se_mu = math.sqrt(1 / np.sum(w_star))
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    half_pred = stats.t.ppf(0.975, len(y) - 2) * math.sqrt(tau2 + se_mu**2)
    return mu, se_mu, tau2, i2, (mu - half_pred, mu + half_pred)


def cis(y, se):
    return [x - Z * s for x, s in zip(y, se)], [x + Z * s for x, s in zip(y, se)]


def test_the_random_effects_mean_is_dersimonian_and_lairds_by_hand():
    y = [0.12, -0.05, 0.30, 0.08, 0.02]  # five cells that disagree beyond their own noise
    se = [0.03, 0.02, 0.05, 0.04, 0.02]
    p = pooling.random_effects(y, *cis(y, se))
    mu, se_mu, tau2, i2, pred = dersimonian_laird(y, se)
    assert (p.estimate, p.low, p.high) == pytest.approx((mu, mu - Z * se_mu, mu + Z * se_mu))
    assert (p.tau2, p.i2, p.k) == pytest.approx((tau2, i2, 5))
    assert (p.pred_low, p.pred_high) == pytest.approx(pred)
    assert tau2 > 0 and p.pred_high - p.pred_low > p.high - p.low  # a new cell varies more
    # The t interval over the cells as units (what the scorecard used to give) is another thing.
    t_half = stats.t.ppf(0.975, 4) * np.std(y, ddof=1) / math.sqrt(5)
    assert p.high - p.low != pytest.approx(2 * t_half, rel=0.05)


def test_cells_that_agree_pool_to_the_fixed_effect_mean_and_one_cell_is_itself():
    y, se = [0.10, 0.11, 0.09], [0.02, 0.02, 0.02]
    p = pooling.random_effects(y, *cis(y, se))
    assert p.tau2 == 0 and p.i2 == 0
    assert (p.estimate, p.high - p.low) == pytest.approx((0.10, 2 * Z * 0.02 / math.sqrt(3)))
    assert math.isnan(p.pred_low)  # 3 cells: t with 1 degree of freedom is not given
    one = pooling.random_effects([0.1], [0.05], [0.2])
    assert (one.estimate, one.low, one.high, one.k) == (0.1, 0.05, 0.2, 1)


def test_a_difference_of_two_pooled_means_adds_their_variances():
    a = pooling.random_effects([0.2, 0.22], [0.1, 0.12], [0.3, 0.32])
    b = pooling.random_effects([0.0], [-0.1], [0.1])
    d, lo, hi = pooling.difference(a, b)
    se = math.sqrt(((a.high - a.low) / (2 * Z)) ** 2 + (0.1 / Z) ** 2)
    assert (d, lo, hi) == pytest.approx((a.estimate, a.estimate - Z * se, a.estimate + Z * se))


def measure(cells, n=10):
    by_cell = tuple(v.CellEstimate(f"cell {i}", e, lo, hi) for i, (e, lo, hi) in enumerate(cells))
    p = pooling.pool(by_cell)
    return v.Measure("q", p.estimate, p.low, p.high, n, len(by_cell), by_cell=by_cell, pooled=p)


BELOW = v.Band.of({"below": -0.05})
# Three cells clearly below -5 %, one clearly above, one straddling.
LOSS, GAIN, OPEN = (-0.2, -0.25, -0.15), (0.1, 0.05, 0.15), (-0.06, -0.1, -0.02)


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
    ],
)
def test_each_quantifier_reads_the_cells_as_its_word_says(quantifier, cells, want, held):
    j = c.judge_claim(measure(cells), BELOW, quantifier)
    assert (j.verdict, j.holds_in) == (want, held), j.reason


def test_a_mean_over_cells_that_disagree_says_more_samples_will_not_settle_it():
    j = c.judge_claim(measure([LOSS, LOSS, GAIN, GAIN]), BELOW, "mean")
    assert j.verdict == v.INCONCLUSIVE and j.settle == c.DISAGREE
    assert "2 of 4 cells (2 conclusively outside)" in j.reason


def test_an_imprecise_verdict_says_how_many_times_the_samples_would_settle_it():
    # Estimate -0.09, half-width 0.06, 0.04 from the edge: (0.06 / 0.04)^2 = 2.25 times the runs.
    j = c.judge_claim(measure([(-0.09, -0.15, -0.03)]), BELOW, "mean")
    assert j.verdict == v.INCONCLUSIVE and j.settle.startswith("about 2.3× the runs per cell")
    j = c.judge_claim(measure([(-0.09, -0.15, -0.03)], n=3), BELOW, "mean")
    assert j.verdict == v.INCONCLUSIVE and "at least 5 samples" in j.settle


def test_the_best_cell_is_widened_by_bonferroni_for_the_cells_it_was_picked_from():
    cells = [(-0.085, -0.115, -0.055), GAIN, GAIN, GAIN]
    j = c.judge_claim(measure(cells), BELOW, "some")
    se = 0.03 / Z
    z4 = stats.norm.ppf(1 - 0.05 / 8)  # alpha / k, two-sided, k = 4
    assert (j.shown.low, j.shown.high) == pytest.approx((-0.085 - z4 * se, -0.085 + z4 * se))
    # Alone the cell is inside the range; picked from four it straddles its edge.
    assert c.judge_claim(measure(cells[:1]), BELOW, "some").verdict == v.REPRODUCED
    assert j.verdict == v.INCONCLUSIVE


def test_every_shows_the_cell_that_decides():
    j = c.judge_claim(measure([LOSS, (-0.1, -0.12, -0.08), GAIN]), BELOW, "every")
    assert j.shown.estimate == GAIN[0] and "cell 2" in j.shown.what and "cell 2" in j.reason
