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
from dataclasses import dataclass, replace

# scipy.special, not scipy.stats: the Snakefile plans with these functions, and scipy.stats's
# import alone (about a second) would be paid by every snakemake start.
from scipy import special

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
    df); log_sign where the estimate is a ratio's IR whose interval was made on log(ratio), as
    the pair study's tables make it (+1: IR = ratio - 1, higher is better; -1: IR = 1 - ratio;
    0: the interval is symmetric on the estimate's own scale). A cell with a log_sign is tested
    where its interval was made (on_test_scale), so that its verdict and the interval shown
    agree (the same SE read symmetrically on the IR's scale sits lower: simulated in
    studies/pairs/findings/calibration.edge_error, docs/statistics.md#calibration)."""

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
    log_sign: int = 0

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
        """The two-sided interval at `confidence`, made on the scale the cell is tested on."""
        q = quantile(0.5 + confidence / 2, self.df)
        if not self.log_sign:
            return self.estimate - q * self.sd, self.estimate + q * self.sd
        g, se = _log_ratio(self), _log_se(self)
        return tuple(sorted(self.log_sign * (math.exp(g + s * q * se) - 1) for s in (-1, 1)))


def _log_ratio(c: CellEstimate, x: float | None = None) -> float:
    """log(ratio) of the cell's estimate (or of x, an IR on its scale); -inf where the ratio is not positive."""
    ratio = 1 + c.log_sign * (c.estimate if x is None else x)
    return math.log(ratio) if ratio > 0 else -math.inf


def _log_se(c: CellEstimate) -> float:
    """The SE of log(ratio): the IR-scale SE over the ratio (the tables' SE parts are the ratio
    times the log ratio's, by the delta method), else from the 95 % CI's ends on the log scale."""
    if math.isfinite(c.se):
        return c.se / (1 + c.log_sign * c.estimate)
    ends = sorted(_log_ratio(c, x) for x in (c.low, c.high))
    return (ends[1] - ends[0]) / (2 * quantile(0.5 + TABLE_CONFIDENCE / 2, c.df))


def on_test_scale(c: CellEstimate, low: float, high: float) -> tuple[CellEstimate, float, float]:
    """The cell and a claim's range [low, high] on the scale its interval was made on: log(ratio)
    for a cell with a log_sign (the range's edges mapped through the same increasing function of
    the IR: log(1 + IR) or -log(1 - IR)), itself otherwise. One-sided tests and margins are read there."""
    if not c.log_sign:
        return c, low, high
    s = c.log_sign

    def edge(x: float) -> float:
        if not math.isfinite(x):
            return x
        ratio = 1 + s * x
        return s * math.log(ratio) if ratio > 0 else -s * math.inf

    g, se = s * _log_ratio(c), _log_se(c)
    q = quantile(0.5 + TABLE_CONFIDENCE / 2, c.df)
    mapped = CellEstimate(c.label, g, g - q * se, g + q * se, se, c.df, c.level)
    return mapped, edge(low), edge(high)


def quantile(p: float, df: float) -> float:
    return float(special.stdtrit(df, p) if math.isfinite(df) else special.ndtri(p))


def survival(x: float, df: float) -> float:
    return float(special.stdtr(df, -x) if math.isfinite(df) else special.ndtr(-x))


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
    Satterthwaite's degrees of freedom; its interval is the table-level (95 %) t interval. One
    cell with weight 1 keeps its log_sign (its interval then made on the log scale)."""
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
    out = CellEstimate(label, est, est - q * se, est + q * se, se, df, weakest_level(cells), shared, group,
                       satterthwaite(own_pieces))  # fmt: skip
    if len(cells) == 1 and weights[0] == 1 and cells[0].log_sign:
        out = replace(out, log_sign=cells[0].log_sign)
        low, high = out.interval(TABLE_CONFIDENCE)
        out = replace(out, low=low, high=high)
    return out


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
    return float(special.ndtr((margin - quantile(1 - alpha, df * factor) * final_se) / spread))


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
    from scipy.optimize import brentq

    return float(
        brentq(
            lambda f: decide_probability(f, margin, se, df, alpha) - assurance, 1.0 + 1e-9, MAX_RUNS_FACTOR
        )
    )
