"""The inference a verdict rests on: cells with their standard errors and the noise they share,
linear combinations of them (a mean over cells, a difference of cases), and one-sided tests of
a value against a claim's range.

A cell is an estimate (an IR, say) with its standard error at the level its table states (runs
and iterations for the pair study). Cells of one target share the noise of their common
baseline: every Case 2/3a/3b IR of L is divided by the same Case 1 mean. A cell carries that
shared part as a loading on a named source (`shared`), so that

  Var(cell)        = se²                      (its own noise plus its shared loadings squared)
  Cov(cell, other) = Σ loading × loading       over the sources both carry

and a linear combination Σ wᵢ·cellᵢ has the variance w'Vw with that covariance (a difference of
two cases of one target then cancels their baseline, a mean over one target's partners does
not divide it by k). The degrees of freedom of a combination are Welch and Satterthwaite's, the
pieces of variance grouped by the variance estimate they come from (`group`: the pair study's
variance components of one target), since pieces of one estimate are not independent.

The estimand of a mean over cells is the unweighted mean of the named cells' true values: the
claim is about those cells (the paper's own figure is their unweighted mean too), not about a
population of cells, so the cells' disagreement is not noise here (findings.pooling measures it
for the report)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from scipy import optimize, stats

# Each side of a verdict is a one-sided test at this level (a claim's range with two edges:
# both edges at this level to confirm, TOST; each at half of it to refute). The interval that
# shows it is the two-sided 1 - 2·ALPHA one.
ALPHA = 0.05
DECISION_CONFIDENCE = 1 - 2 * ALPHA
TABLE_CONFIDENCE = 0.95  # the statistics tables' intervals
RUNS, ITERATIONS = "runs", "iterations"


@dataclass(frozen=True)
class CellEstimate:
    """One cell: what it is, its estimate and the 95 % CI its table gives; its standard error
    and degrees of freedom (NaN: taken from the CI, normal); the level its interval covers
    (RUNS, ITERATIONS, "" where the table does not say); its loadings on shared noise sources
    ((source, loading, df) triples: the df of the estimate the loading comes from); the
    variance estimate its own part comes from (group) and that estimate's df (own_df; NaN:
    df)."""

    label: str
    estimate: float
    low: float
    high: float
    se: float = math.nan
    df: float = math.inf
    level: str = ""
    shared: tuple[tuple[Hashable, float, float], ...] = ()
    group: Hashable = None
    own_df: float = math.nan

    @property
    def sd(self) -> float:
        """The standard error: given, else from the 95 % CI (t with df, normal when df is inf)."""
        if math.isfinite(self.se):
            return self.se
        return (self.high - self.low) / (2 * quantile(0.5 + TABLE_CONFIDENCE / 2, self.df))

    @property
    def own_var(self) -> float:
        """The variance no other cell shares."""
        return max(0.0, self.sd**2 - sum(w * w for _, w, _ in self.shared))

    @property
    def own_dof(self) -> float:
        return self.df if math.isnan(self.own_df) else self.own_df

    def interval(self, confidence: float = DECISION_CONFIDENCE) -> tuple[float, float]:
        q = quantile(0.5 + confidence / 2, self.df)
        return self.estimate - q * self.sd, self.estimate + q * self.sd


def quantile(p: float, df: float) -> float:
    return float(stats.t.ppf(p, df) if math.isfinite(df) else stats.norm.ppf(p))


def survival(x: float, df: float) -> float:
    return float(stats.t.sf(x, df) if math.isfinite(df) else stats.norm.sf(x))


def weakest_level(cells: Sequence[CellEstimate]) -> str:
    levels = {c.level for c in cells}
    return ITERATIONS if ITERATIONS in levels else ("" if "" in levels else RUNS)


def satterthwaite(pieces) -> float:
    """Welch and Satterthwaite's degrees of freedom of a sum of variance estimates, given as
    (variance, df) pairs; inf when none has finite df."""
    total = sum(v for v, _ in pieces)
    denominator = sum(v * v / d for v, d in pieces if math.isfinite(d) and d > 0)
    return total * total / denominator if denominator > 0 else math.inf


def linear(cells: Sequence[CellEstimate], weights: Sequence[float], label: str) -> CellEstimate:
    """Σ wᵢ·cellᵢ with its standard error from the cells' covariance (see the module) and
    Satterthwaite's degrees of freedom; its interval is the table-level (95 %) t interval."""
    est = sum(w * c.estimate for c, w in zip(cells, weights))
    # Variance pieces by the estimate they come from, (variance, df): the cells' own parts by
    # group, the shared parts by source (their loadings summed first).
    own: dict[Hashable, list[float]] = {}
    loadings: dict[Hashable, list[float]] = {}
    for i, (c, w) in enumerate(zip(cells, weights)):
        piece = own.setdefault(c.group if c.group is not None else ("cell", i, c.label), [0.0, c.own_dof])
        piece[0] += w * w * c.own_var
        piece[1] = min(piece[1], c.own_dof)
        for source, loading, df in c.shared:
            entry = loadings.setdefault(source, [0.0, df])
            entry[0] += w * loading
            entry[1] = min(entry[1], df)
    own_pieces = [(v, d) for v, d in own.values()]
    pieces = own_pieces + [(t * t, d) for t, d in loadings.values()]
    var = sum(v for v, _ in pieces)
    # Never more than the df of the largest piece: Satterthwaite's df alone is liberal where a
    # piece with 2-3 df dominates (the default's baseline: 3 runs), because the estimated
    # variance and its df err together (simulated: the mean of 9 cells covered 91 %; with this
    # floor 94 %, and 98 % at 2 cells: studies/pairs/findings/calibration.py).
    df = satterthwaite(pieces)
    largest_df = max(pieces, key=lambda p: p[0])[1] if pieces else math.inf
    if largest_df > 0:
        df = min(df, largest_df)
    se = math.sqrt(var)
    q = quantile(0.5 + TABLE_CONFIDENCE / 2, df)
    # What the combination shares with other cells stays shared; the rest is its own.
    shared = tuple((s, t, d) for s, (t, d) in loadings.items() if t)
    groups = {c.group for c in cells}
    group = groups.pop() if len(groups) == 1 else None
    return CellEstimate(label, est, est - q * se, est + q * se, se, df, weakest_level(cells), shared, group,
                        satterthwaite(own_pieces))  # fmt: skip


def mean_of(cells: Sequence[CellEstimate], label: str = "mean") -> CellEstimate:
    """The unweighted mean of the cells (one cell is itself, with its SE made explicit)."""
    return linear(cells, [1 / len(cells)] * len(cells), label)


def correlated_mean(cells: Sequence[CellEstimate], label: str, why: str) -> CellEstimate:
    """The mean of cells measured in the same runs (one target's metrics; one layer's message
    sizes), as if perfectly correlated: the widest their mean's interval can be, since the cells
    of one run move together by an amount nothing measures. why names the shared source."""
    source = (why, label)
    same = [CellEstimate(c.label, c.estimate, c.low, c.high, c.sd, c.df, c.level, ((source, c.sd, c.df),), source)
            for c in cells]  # fmt: skip
    return mean_of(same, label)


def difference(
    a: Sequence[CellEstimate], b: Sequence[CellEstimate], label: str = "difference"
) -> CellEstimate:
    """mean(a) - mean(b), the noise the two groups share cancelling."""
    return linear([*a, *b], [1 / len(a)] * len(a) + [-1 / len(b)] * len(b), label)


# -- one-sided tests against a range --------------------------------------------------------------


def p_inside(estimate: float, se: float, df: float, low: float, high: float) -> float:
    """The p-value of "the value lies outside [low, high]": the larger of the one-sided tests at
    each finite edge (TOST for two edges: an intersection-union test, no adjustment needed)."""
    if not (math.isfinite(se) and se > 0):
        return math.nan
    ps = [survival((estimate - low) / se, df)] if math.isfinite(low) else []
    ps += [survival((high - estimate) / se, df)] if math.isfinite(high) else []
    return max(ps) if ps else 0.0


def p_outside(estimate: float, se: float, df: float, low: float, high: float) -> float:
    """The p-value of "the value lies inside [low, high]": the smaller one-sided test beyond an
    edge, Bonferroni over the finite edges (either refutes a two-edged range)."""
    if not (math.isfinite(se) and se > 0):
        return math.nan
    ps = [survival((low - estimate) / se, df)] if math.isfinite(low) else []
    ps += [survival((estimate - high) / se, df)] if math.isfinite(high) else []
    return min(1.0, min(ps) * len(ps)) if ps else 1.0


MAX_RUNS_FACTOR = 100.0  # beyond a hundred times the runs, "no practical number of runs"


def decide_probability(factor: float, margin: float, se: float, df: float, alpha: float) -> float:
    """The probability, given the data so far, that a one-sided test at alpha passes once the
    runs are `factor` times what they are: the estimate then pools the runs made and the new
    ones, whose mean is drawn from the predictive distribution (flat prior: the value ~
    N(estimate, se²)), so the final margin ~ N(margin, se²·(f - 1)/f); the final SE is se/√f with
    the degrees of freedom growing with the runs."""
    if factor <= 1:
        return float(margin / se > quantile(1 - alpha, df))
    final_se = se / math.sqrt(factor)
    spread = se * math.sqrt((factor - 1) / factor)
    return float(stats.norm.cdf((margin - quantile(1 - alpha, df * factor) * final_se) / spread))


def runs_factor(margin: float, se: float, df: float, alpha: float, assurance: float) -> float:
    """How many times a cell's runs would make a one-sided test at `alpha` pass with probability
    `assurance` given the data (decide_probability; its runs-level SE shrinking with the square
    root of the runs), where the estimate lies `margin` beyond the edge it is tested against
    (inf: no factor up to MAX_RUNS_FACTOR does: the estimate is too near the edge). A factor
    from the estimate alone ((t + z)·se/margin)² would promise about half of what it names
    where the value is near the edge; this one promises what the data support."""
    if not (math.isfinite(se) and se > 0) or margin <= 0:
        return math.inf
    if decide_probability(MAX_RUNS_FACTOR, margin, se, df, alpha) < assurance:
        return math.inf
    if decide_probability(1.0 + 1e-9, margin, se, df, alpha) >= assurance:
        return 1.0
    return float(
        optimize.brentq(
            lambda f: decide_probability(f, margin, se, df, alpha) - assurance, 1.0 + 1e-9, MAX_RUNS_FACTOR
        )
    )
