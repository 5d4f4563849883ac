"""Bootstrap confidence intervals shared by every study's statistics: two independent groups,
a vectorised statistic of both (an IR, a ratio of means), BCa with the percentile interval as
the fallback, and a generator seeded per row so that each row's CI depends only on its data.

The relative change of a mean against a baseline's, oriented so that negative is worse, is the
papers' interference ratio (a case against Case 1); the drift check (Case 1 at the end against
the first) and the comparison with a saved session (today against the baseline) are the same
statistic with the same interval."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
from scipy import stats

from interference.stats.descriptive import CONFIDENCE
from interference.stats.descriptive import join as _join


def rng_for(seed: int, key: tuple) -> np.random.Generator:
    """A generator per group: each row's CI depends only on its own data, not on row order."""
    return np.random.default_rng([seed, zlib.crc32("\t".join(map(str, key)).encode())])


def bca_else_percentile(data: tuple, statistic, n_resamples: int, seed: int, key: tuple, **options):
    """scipy's 95 % bootstrap interval of statistic(*data): BCa, else the percentile interval when
    BCa is undefined (degenerate, e.g. zero variance). (low, high, "bca" | "percentile" | "",
    the reasons a method was passed over); `options` go to scipy.stats.bootstrap."""
    reasons = []
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                data,
                statistic,
                n_resamples=n_resamples,
                confidence_level=CONFIDENCE,
                method=method,
                rng=rng_for(seed, key),
                **options,
            )
        low, high = res.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high), method.lower(), reasons
        reasons.append(f"bootstrap {method} interval undefined")
    return np.nan, np.nan, "", reasons


def bootstrap_ci(
    x, base, statistic, n_resamples: int, seed: int, key: tuple
) -> tuple[float, float, str, str]:
    """95% CI of statistic(x, base) by resampling both groups independently: (low, high,
    method, reason), by bca_else_percentile."""
    data = (np.asarray(x, float), np.asarray(base, float))
    low, high, method, reasons = bca_else_percentile(
        data, statistic, n_resamples, seed, key, paired=False, vectorized=True
    )
    return low, high, f"bootstrap_{method}_{n_resamples}" if method else "", _join(reasons)


def relative_change(mean: float, baseline_mean: float, higher_is_better: bool) -> float:
    """(mu_i - mu)/mu if higher is better, else (mu - mu_i)/mu: < 0 is worse than the baseline."""
    sign = 1.0 if higher_is_better else -1.0
    return sign * (mean - baseline_mean) / baseline_mean


def _relative_change_statistic(higher_is_better: bool):
    # Vectorised over bootstrap resamples (scipy passes arrays with a resample axis).
    def statistic(x, base, axis=-1):
        return relative_change(np.mean(x, axis=axis), np.mean(base, axis=axis), higher_is_better)

    return statistic


def relative_change_ci(
    x, base, higher_is_better: bool, n_resamples: int, seed: int, key: tuple = ()
) -> tuple[float, float, str, str]:
    """95% CI of the relative change of x's mean against base's (see bootstrap_ci)."""
    return bootstrap_ci(x, base, _relative_change_statistic(higher_is_better), n_resamples, seed, key)
