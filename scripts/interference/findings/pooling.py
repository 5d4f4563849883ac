"""How much cells disagree: a random-effects meta-analysis of their estimates, for the report.

A verdict reads the mean of the cells a claim names (findings.inference: their unweighted mean,
shared baselines in its SE). How far the cells differ beyond their own noise is this module's:
the between-cell variance tau² (Paule and Mandel's estimator, statsmodels' combine_effects with
method_re="iterated"), I², the random-effects mean with the Hartung-Knapp-Sidik-Jonkman interval
(t with k - 1 degrees of freedom, its scale floored at 1 so that cells agreeing by chance do not
narrow it below the fixed-effect interval: Röver, Knapp and Friede 2015) and, from 4 cells on,
a 95 % prediction interval for a new cell of the same kind (Higgins, Thompson and Spiegelhalter
2009: t with k - 2 degrees of freedom). The cells are taken as independent here: it describes,
it decides nothing."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from interference.stats.descriptive import CONFIDENCE

Z = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))
MIN_CELLS_PREDICTION = 4  # t with k - 2 degrees of freedom: at least 2


@dataclass(frozen=True)
class Pooled:
    """The random-effects estimate and its 95 % HKSJ interval, tau² and I² (NaN for one cell),
    the prediction interval (NaN below MIN_CELLS_PREDICTION cells) and the number of cells."""

    estimate: float
    low: float
    high: float
    tau2: float
    i2: float
    pred_low: float
    pred_high: float
    k: int


def se_from_ci(low, high) -> np.ndarray:
    """A cell's standard error from its 95 % CI (half its width over z; a bootstrap interval's
    asymmetry is averaged)."""
    return (np.asarray(high, float) - np.asarray(low, float)) / (2 * Z)


def random_effects(estimates, lows, highs) -> Pooled:
    """Pool cells given as estimate and 95 % CI (see the module's docstring). One cell is itself."""
    y = np.asarray(estimates, float)
    lows, highs = np.asarray(lows, float), np.asarray(highs, float)
    nan = math.nan
    if y.size == 1:
        return Pooled(float(y[0]), float(lows[0]), float(highs[0]), nan, nan, nan, nan, 1)
    se = se_from_ci(lows, highs)
    if not np.all(np.isfinite(se)) or not np.all(np.isfinite(y)):
        return Pooled(float(y.mean()), nan, nan, nan, nan, nan, nan, y.size)
    # A cell with a zero-width CI (identical samples) would take all the weight: floor its SE.
    se = np.maximum(se, 1e-9 + 1e-6 * np.abs(y))
    with warnings.catch_warnings():  # statsmodels warns that the cells' own intervals are normal
        warnings.simplefilter("ignore")
        res = combine_effects(y, se**2, method_re="iterated", use_t=True)
    mu, tau2 = float(res.mean_effect_re), max(0.0, float(res.tau2))
    # HKSJ: the WLS scale of the residuals times the random-effects variance, floored at 1.
    scale = max(1.0, float(res.scale_hksj_re))
    sd = math.sqrt(scale) * float(res.sd_eff_w_re)
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, y.size - 1) * sd
    pred_low = pred_high = nan
    if y.size >= MIN_CELLS_PREDICTION:
        pred = stats.t.ppf(0.5 + CONFIDENCE / 2, y.size - 2) * math.sqrt(tau2 + float(res.sd_eff_w_re) ** 2)
        pred_low, pred_high = mu - pred, mu + pred
    i2 = min(1.0, max(0.0, float(res.i2)))
    return Pooled(mu, mu - half, mu + half, tau2, i2, pred_low, pred_high, int(y.size))


def pool(cells) -> Pooled:
    """random_effects over CellEstimates (findings.inference)."""
    return random_effects([c.estimate for c in cells], [c.low for c in cells], [c.high for c in cells])
