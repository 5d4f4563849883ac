"""What a finding's measurement says about its claim: one rule for every finding.

A claim is a band the quantity must lie in (below a threshold, above one, between two). One
interval's verdict needs enough data:
  reproduced       the 95 % CI lies wholly inside the band;
  not reproduced   the CI lies wholly outside it;
  inconclusive     the CI straddles an edge, or the samples per side are fewer than MIN_SAMPLES;
each with the reason. How a claim over several cells is read (every, mean, most, some, about) is
findings.claims; how cells are pooled, findings.pooling. The statistics here are for measures
the statistics tables do not hold (ratios of two summaries, shares)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from interference.stats.descriptive import CONFIDENCE

MIN_SAMPLES = 5  # per side of a comparison (the papers' own iterations were 5 to 30)

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable on this machine"
NOT_RUN = "not run in this config"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN)


def quantity(kind: str):
    """Marks a check's quantity: "ir" (a fraction, shown in %; the default), "ratio" (×) or
    "share" (a proportion, in %)."""

    def mark(check):
        check.quantity = kind
        return check

    return mark


@dataclass(frozen=True)
class Band:
    """Where the claim puts the quantity: [low, high] (either may be open)."""

    low: float = -math.inf
    high: float = math.inf

    @classmethod
    def of(cls, expect: dict) -> Band:
        if "below" in expect:
            return cls(high=float(expect["below"]))
        if "above" in expect:
            return cls(low=float(expect["above"]))
        low, high = expect["between"]
        return cls(float(low), float(high))

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class CellEstimate:
    """One cell of a measure over cells: what it is, its estimate and 95 % CI."""

    label: str
    estimate: float
    low: float
    high: float


@dataclass
class Measure:
    """Our value of a finding's quantity, its 95 % CI and how much data it rests on.

    what: the quantity in words ("mean IR of L beside S and B over 6 cells"); n: the fewest
    samples on a side of any comparison in it; cells: how many cells a mean over cells has (1:
    one comparison); published: the paper's value of the same quantity where its tables give it;
    by_cell: the cells a pooled measure is made of; pooled: its heterogeneity (findings.pooling)."""

    what: str
    estimate: float
    low: float
    high: float
    n: int
    cells: int = 1
    published: float | None = None
    published_from: str = ""
    evidence: list[str] = field(default_factory=list)
    by_cell: tuple[CellEstimate, ...] = ()
    pooled: object | None = None


@dataclass
class Skip:
    """A finding this machine or this config cannot test: the verdict and why."""

    verdict: str
    why: str


def judge(m: Measure, band: Band, show=lambda x: f"{x:g}") -> tuple[str, str]:
    """(verdict, reason) by the rule above; show(x) writes a threshold as the reader knows it."""
    if m.n < MIN_SAMPLES:
        return (
            INCONCLUSIVE,
            f"too few samples: {m.n} on a side, needs at least {MIN_SAMPLES} (more iterations or longer windows)",
        )
    if not (np.isfinite(m.low) and np.isfinite(m.high)):
        return INCONCLUSIVE, "no confidence interval could be computed"
    inside = band.contains(m.low) and band.contains(m.high)
    outside = m.high < band.low or m.low > band.high
    if inside:
        return REPRODUCED, "the 95 % CI lies inside the claim's range"
    if outside:
        return NOT_REPRODUCED, "the 95 % CI lies outside the claim's range"
    edge = band.low if m.low < band.low <= m.high else band.high
    return INCONCLUSIVE, (
        f"the 95 % CI straddles the threshold {show(edge)}: needs more samples or a larger workload to narrow it"
    )


def ratio_from_summaries(m1, sd1, n1, m2, sd2, n2) -> tuple[float, float, float]:
    """m1/m2 with a 95 % interval from the delta method on the log scale (two independent means
    given as mean, SD, n): for ratios of two summary rows, where no table holds a bootstrap."""
    ratio = m1 / m2
    if min(n1, n2) < 2 or m1 <= 0 or m2 <= 0:
        return ratio, math.nan, math.nan
    se = math.sqrt((sd1 / m1) ** 2 / n1 + (sd2 / m2) ** 2 / n2)
    z = stats.t.ppf(0.5 + CONFIDENCE / 2, min(n1, n2) - 1)
    return ratio, ratio * math.exp(-z * se), ratio * math.exp(z * se)


def share_ci(agree: int, total: int) -> tuple[float, float, float]:
    """A proportion with its Wilson 95 % interval."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(agree, total, alpha=1 - CONFIDENCE, method="wilson")
    return agree / total, float(low), float(high)
