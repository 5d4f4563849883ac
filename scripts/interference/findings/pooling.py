"""One estimate from several cells' estimates: a random-effects meta-analysis.

Each cell (an IR of one target beside one partner in one case, say) comes with its own 95 % CI,
from which its standard error is taken. The cells are pooled by inverse-variance weights with a
between-cell variance tau² (DerSimonian and Laird's estimator, through statsmodels'
combine_effects), so that a cell's own noise and the cells' disagreement both widen the interval.
The heterogeneity is reported (tau², I²) and, from 4 cells on, a 95 % prediction interval for a
new cell of the same kind (Higgins, Thompson and Spiegelhalter 2009: t with k - 2 degrees of
freedom). Never a t interval with the cells as units."""

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
    """The pooled estimate and its 95 % CI, tau² and I² (NaN for one cell), the prediction
    interval (NaN below MIN_CELLS_PREDICTION cells) and the number of cells."""

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
    if y.size == 1:
        return Pooled(float(y[0]), float(lows[0]), float(highs[0]), math.nan, math.nan, math.nan, math.nan, 1)
    se = se_from_ci(lows, highs)
    if not np.all(np.isfinite(se)) or not np.all(np.isfinite(y)):
        return Pooled(float(y.mean()), math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, y.size)
    # A cell with a zero-width CI (identical samples) would take all the weight: floor its SE.
    se = np.maximum(se, 1e-9 + 1e-6 * np.abs(y))
    with warnings.catch_warnings():  # its sqrt of a negative tau² is replaced below
        warnings.simplefilter("ignore", RuntimeWarning)
        res = combine_effects(y, se**2, method_re="chi2")
    mu, sd, tau2 = float(res.mean_effect_re), float(res.sd_eff_w_re), float(res.tau2)
    if tau2 <= 0:  # DerSimonian-Laird truncates at 0 (statsmodels leaves the moment estimate negative)
        mu, sd, tau2 = float(res.mean_effect_fe), float(res.sd_eff_w_fe), 0.0
    pred_low = pred_high = math.nan
    if y.size >= MIN_CELLS_PREDICTION:
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, y.size - 2) * math.sqrt(tau2 + sd**2)
        pred_low, pred_high = mu - half, mu + half
    return Pooled(
        mu, mu - Z * sd, mu + Z * sd, tau2, max(0.0, float(res.i2)), pred_low, pred_high, int(y.size)
    )


def pool(cells) -> Pooled:
    """random_effects over CellEstimates (findings.verdict)."""
    return random_effects([c.estimate for c in cells], [c.low for c in cells], [c.high for c in cells])


def difference(a: Pooled, b: Pooled) -> tuple[float, float, float]:
    """a - b of two independent pooled estimates, with its 95 % CI (their SEs in quadrature)."""
    se = math.hypot((a.high - a.low) / (2 * Z), (b.high - b.low) / (2 * Z))
    d = a.estimate - b.estimate
    return d, d - Z * se, d + Z * se
