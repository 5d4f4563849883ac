"""What a finding's measurement says about its claim: one rule for every finding.

A claim is a band the quantity must lie in (below a threshold, above one, between two). One
estimate's verdict is a pair of one-sided tests at ALPHA (findings.inference):
  reproduced       the value lies inside the band (at each finite edge; TOST for two), i.e. the
                   two-sided 1 - 2·ALPHA (90 %) interval lies inside it;
  not reproduced   the value lies outside the band (Bonferroni over two edges);
  inconclusive     neither, or the interval covers iterations only (one run per cell: the
                   run-to-run variation, the larger part on a shared host, is not in it), or an
                   interval whose level its table does not state rests on fewer than MIN_SAMPLES
                   samples a side (too_few_samples: a runs-level interval counts its runs in its
                   df, at least 2 a side, and its samples add nothing to that);
each with the reason. How a claim over several cells is read (every, mean, most, some, about) is
findings.claims; how cells combine, findings.inference. The statistics here are for measures
the statistics tables do not hold (ratios of two summaries, shares)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from interference.findings.inference import (
    ALPHA,
    DECISION_CONFIDENCE,
    ITERATIONS,
    RUNS,
    TABLE_CONFIDENCE,
    CellEstimate,
    on_test_scale,
    p_inside,
    p_outside,
    quantile,
)

__all__ = ["ALPHA", "DECISION_CONFIDENCE", "CellEstimate"]

MIN_SAMPLES = 5  # per side of a comparison (the papers' own iterations were 5 to 30)


def too_few_samples(n: int, level: str) -> bool:
    """The samples gate, for intervals whose level is not stated (""). The run is the unit of
    replication: a runs-level interval rests on at least 2 runs a side and its df counts them,
    so 3 runs of one long iteration (B's) decide where 2 of 3 short ones would, and an
    iterations-level one decides nothing whatever its samples (missing_level)."""
    return level != RUNS and n < MIN_SAMPLES


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


@dataclass
class Measure:
    """Our value of a finding's quantity, its 95 % CI and how much data it rests on.

    what: the quantity in words ("mean IR of L beside S and B over 6 cells"); n: the fewest
    samples on a side of any comparison in it; cells: how many cells a mean over cells has (1:
    one comparison); published: the paper's value of the same quantity where its tables give it;
    by_cell: the cells a measure over cells is made of; pooled: their heterogeneity
    (findings.pooling); se, df: the estimate's standard error and degrees of freedom (NaN: from
    the 95 % CI); level: what the interval covers (findings.inference: RUNS, ITERATIONS, or ""
    where the study's table does not say)."""

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
    se: float = math.nan
    df: float = math.inf
    level: str = ""
    log_sign: int = 0  # inference.CellEstimate's: the interval made on log(ratio)

    def cell(self) -> CellEstimate:
        return CellEstimate(self.what, self.estimate, self.low, self.high, self.se, self.df, self.level,
                            log_sign=self.log_sign)  # fmt: skip

    @classmethod
    def of(cls, c: CellEstimate, what: str, n: int, **kw) -> Measure:
        """A measure that is one combined cell (findings.inference.linear)."""
        return cls(
            what, c.estimate, c.low, c.high, n, se=c.sd, df=c.df, level=c.level, log_sign=c.log_sign, **kw
        )


@dataclass
class Skip:
    """A finding this machine or this config cannot test: the verdict and why."""

    verdict: str
    why: str


def missing_level(level: str) -> str:
    """Why an interval at this level decides nothing ("" where it may)."""
    if level == ITERATIONS:
        return ("the interval covers iterations only (one run per cell): the variation between runs is not in "
                "it; needs at least 2 runs a cell (config repetitions)")  # fmt: skip
    return ""


def edges_text(band: Band, show) -> str:
    edges = [show(e) for e in (band.low, band.high) if math.isfinite(e)]
    return " and ".join(edges)


def judge(m: Measure, band: Band, show=lambda x: f"{x:g}") -> tuple[str, str]:
    """(verdict, reason) by the rule above; show(x) writes a threshold as the reader knows it."""
    if why := missing_level(m.level):
        return INCONCLUSIVE, why
    if too_few_samples(m.n, m.level):
        return (
            INCONCLUSIVE,
            f"too few samples: {m.n} on a side, needs at least {MIN_SAMPLES} (more iterations or longer windows)",
        )
    c = m.cell()
    if not (np.isfinite(c.estimate) and np.isfinite(c.sd) and c.sd > 0):
        return INCONCLUSIVE, "no confidence interval could be computed"
    level = f"{DECISION_CONFIDENCE:.0%}".replace("%", " %")
    t, low_edge, high_edge = on_test_scale(c, band.low, band.high)
    p_in = p_inside(t.estimate, t.sd, t.df, low_edge, high_edge)
    if p_in <= ALPHA:
        return (
            REPRODUCED,
            f"the {level} CI lies inside the claim's range (one-sided p = {p_in:.2g} at {edges_text(band, show)})",
        )
    p_out = p_outside(t.estimate, t.sd, t.df, low_edge, high_edge)
    if p_out <= ALPHA:
        return NOT_REPRODUCED, f"the value lies outside the claim's range (one-sided p = {p_out:.2g})"
    low, high = c.interval()
    edge = band.low if low < band.low <= high else band.high
    return INCONCLUSIVE, (
        f"the {level} CI straddles the threshold {show(edge)}: needs more runs or a larger workload to narrow it"
    )


def table_level(row) -> dict:
    """A table row's interval level and t df as Measure's keywords (stats/run_level.py writes
    ci_level and ci_df). A table made before them is taken as one run's iterations: every such
    table of these studies ran one run a cell, and the pipeline makes it again from its samples."""
    try:
        df = float(row.get("ci_df", math.nan))
    except (TypeError, ValueError):
        df = math.nan
    level = row.get("ci_level", "")
    return {"df": df if math.isfinite(df) else math.inf,
            "level": level if isinstance(level, str) and level else ITERATIONS}  # fmt: skip


def ratio_from_summaries(m1, sd1, n1, m2, sd2, n2) -> tuple[float, float, float]:
    """m1/m2 with a 95 % interval from the delta method on the log scale (two independent means
    given as mean, SD, n): for ratios of two summary rows, where no table holds a bootstrap."""
    ratio = m1 / m2
    if min(n1, n2) < 2 or m1 <= 0 or m2 <= 0:
        return ratio, math.nan, math.nan
    se = math.sqrt((sd1 / m1) ** 2 / n1 + (sd2 / m2) ** 2 / n2)
    z = quantile(0.5 + TABLE_CONFIDENCE / 2, min(n1, n2) - 1)
    return ratio, ratio * math.exp(-z * se), ratio * math.exp(z * se)


def share_ci(agree: int, total: int) -> tuple[float, float, float]:
    """A proportion with its Wilson 95 % interval."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(agree, total, alpha=1 - TABLE_CONFIDENCE, method="wilson")
    return agree / total, float(low), float(high)
