"""Bootstrap confidence intervals shared by every study's statistics: two independent groups,
a vectorised statistic of both (an IR, a ratio of means), BCa with the percentile interval as
the fallback, and a generator seeded per row so that each row's CI depends only on its data."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
from scipy import stats

from interference.descriptive import CONFIDENCE
from interference.descriptive import join as _join


def rng_for(seed: int, key: tuple) -> np.random.Generator:
    """A generator per group: each row's CI depends only on its own data, not on row order."""
    return np.random.default_rng([seed, zlib.crc32("\t".join(map(str, key)).encode())])


def bootstrap_ci(
    x, base, statistic, n_resamples: int, seed: int, key: tuple
) -> tuple[float, float, str, str]:
    """95% CI of statistic(x, base) by resampling both groups independently: (low, high,
    method, reason). BCa first; when BCa is undefined (degenerate, e.g. zero variance) the
    percentile interval."""
    reasons = []
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                (np.asarray(x, float), np.asarray(base, float)),
                statistic,
                n_resamples=n_resamples,
                paired=False,
                vectorized=True,
                confidence_level=CONFIDENCE,
                method=method,
                rng=rng_for(seed, key),
            )
        low, high = res.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high), f"bootstrap_{method.lower()}_{n_resamples}", _join(reasons)
        reasons.append(f"bootstrap {method} interval undefined")
    return np.nan, np.nan, "", _join(reasons)
