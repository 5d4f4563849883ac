"""A claim read with the quantifier its paper's sentence carries.

Each catalogue entry names one (report/published/findings.yaml, `quantifier`). Every decision is
a one-sided test at ALPHA = 5 % (findings.inference), adjusted where the quantifier picks among
cells:
  mean   the unweighted mean of the cells (the cells' covariance from shared baselines in its
         SE) against the range: verdict.judge.
  about  a figure matched within an equivalence range: the same, both edges tested (TOST).
  every, most, some
         "at least q of the n cells lie in the range" (every: q = n, most: q = ⌊n/2⌋ + 1,
         some: q = 1). Reproduced when at least q cells are shown inside, each by its test at
         ALPHA / (n - q + 1); not reproduced when at least n - q + 1 cells are shown outside,
         each at ALPHA / q. Either error is at most ALPHA whatever the other cells are (a
         truly-outside cell must pass its test for the count to be reached; Markov's bound on
         the expected number of false passes). So "every" confirms by all n cells at ALPHA (an
         intersection-union test) and is refuted by one cell at ALPHA / n (Bonferroni, Holm's
         first step); "some" is the mirror image.
Every verdict carries "holds in k of n cells" (each cell by its own, unadjusted test), and an
inconclusive one says what would settle it: the times the runs per cell that make the tests the
data lean to pass with a probability of ASSURANCE given the data (inference.runs_factor), or
that no practical number of runs is likely to, where an estimate lies too near an edge."""

from __future__ import annotations

import math
from dataclasses import dataclass

from interference.findings.inference import (
    ALPHA,
    CellEstimate,
    on_test_scale,
    p_inside,
    p_outside,
    runs_factor,
)
from interference.findings.verdict import (
    INCONCLUSIVE,
    MIN_SAMPLES,
    NOT_REPRODUCED,
    REPRODUCED,
    Band,
    Measure,
    judge,
    missing_level,
    share_ci,
    too_few_samples,
)

EVERY, MEAN, MOST, SOME, ABOUT = "every", "mean", "most", "some", "about"
QUANTIFIERS = (EVERY, MEAN, MOST, SOME, ABOUT)
INSIDE, OUTSIDE, STRADDLES = "inside", "outside", "straddles"
# The probability, given the data, that a settle factor's runs decide the finding (all the tests
# it needs at once): inference.runs_factor. Simulated over true values on both sides of an edge
# (tests/test_verdict_calibration.py), 0.9 keeps about four in five of the promises made.
ASSURANCE = 0.9
NO_SETTLE = "an estimate lies too near the range's edge: no practical number of runs is likely to settle it"


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reason: str
    holds_in: str
    settle: str
    # What the verdict rests on, where the quantifier changes it (every, most, some); else None.
    shown: Measure | None = None
    # How many times the runs per cell would settle it (settle.py plans from it); nan: none would.
    settle_factor: float = math.nan


def required_cells(quantifier: str, n: int) -> int:
    """q: how many of n cells the quantifier needs in the range."""
    return {EVERY: n, MOST: n // 2 + 1, SOME: 1}[quantifier]


def tested(c: CellEstimate, band: Band) -> tuple[CellEstimate, Band]:
    """The cell and the range on the scale the cell's tests are read on (inference.on_test_scale)."""
    t, low, high = on_test_scale(c, band.low, band.high)
    return t, Band(low, high)


def p_values(c: CellEstimate, band: Band) -> tuple[float, float]:
    """(p of "outside", so small when shown inside; p of "inside", small when shown outside)."""
    c, band = tested(c, band)
    return (p_inside(c.estimate, c.sd, c.df, band.low, band.high),
            p_outside(c.estimate, c.sd, c.df, band.low, band.high))  # fmt: skip


def position(c: CellEstimate, band: Band, alpha: float = ALPHA) -> str:
    """Where a cell lies against the claim's range, by its own tests at alpha."""
    p_in, p_out = p_values(c, band)
    if p_in <= alpha:
        return INSIDE
    if p_out <= alpha:
        return OUTSIDE
    return STRADDLES


def cells_of(m: Measure) -> list[CellEstimate]:
    """The measure's cells; a measure of one comparison is its own cell."""
    return list(m.by_cell) or [m.cell()]


def holds_in(places: list[str]) -> str:
    n_in, n_out = places.count(INSIDE), places.count(OUTSIDE)
    text = f"{n_in} of {len(places)} cell{'s' if len(places) != 1 else ''}"
    return text + (f" ({n_out} conclusively outside)" if n_out else "")


def margin_inside(c: CellEstimate, band: Band) -> float:
    """How far the estimate lies inside the range (from its nearest finite edge; negative:
    outside)."""
    edges = [c.estimate - band.low] if math.isfinite(band.low) else []
    edges += [band.high - c.estimate] if math.isfinite(band.high) else []
    return min(edges) if edges else math.inf


def margin_outside(c: CellEstimate, band: Band) -> float:
    """How far the estimate lies beyond the range (negative: inside)."""
    return (
        -margin_inside(c, band)
        if band.contains(c.estimate)
        else max(band.low - c.estimate, c.estimate - band.high)
    )


def settle_text(factor: float) -> str:
    if not math.isfinite(factor) or factor > 100:
        return NO_SETTLE
    # The run is the unit: more iterations of the same runs do not narrow the variance between runs.
    return (f"about {math.ceil(factor * 10) / 10:g}× the runs per cell would decide it, with a probability of "
            f"{ASSURANCE:.0%} given these data").replace("%", " %")  # fmt: skip


def _settle(cells: list[CellEstimate], band: Band, q: int) -> float:
    """The runs factor for the decision the estimates lean to: q cells inside at ALPHA/(n-q+1),
    or n-q+1 outside at ALPHA/q (two-edged: half of it at an edge), all at once with ASSURANCE.
    Each cell on its own test scale, with the range mapped there (cells of one claim may differ)."""
    n = len(cells)
    scaled = sorted((tested(c, band) for c in cells), key=lambda cb: margin_inside(*cb), reverse=True)
    if sum(b.contains(c.estimate) for c, b in scaled) >= q:
        need, alpha, margin = scaled[:q], ALPHA / (n - q + 1), margin_inside
    else:
        edges = sum(math.isfinite(e) for e in (band.low, band.high))
        need, alpha, margin = scaled[::-1][: n - q + 1], ALPHA / q / edges, margin_outside
    assurance = ASSURANCE ** (1 / len(need))
    return max(runs_factor(margin(c, b), c.sd, c.df, alpha, assurance) for c, b in need)


def judge_claim(m: Measure, band: Band, quantifier: str, show=lambda x: f"{x:g}") -> Judgement:
    """The verdict of one finding: its measure read with the claim's quantifier."""
    cells = cells_of(m)
    places = [position(c, band) for c in cells]
    held = holds_in(places)
    levels = [missing_level(c.level) for c in cells] + [missing_level(m.level)]
    if any(levels):
        why = next(w for w in levels if w)
        return Judgement(INCONCLUSIVE, why, held, "at least 2 runs a cell")
    if too_few_samples(m.n, m.level):
        verdict, reason = judge(m, band, show)
        return Judgement(verdict, reason, held, f"at least {MIN_SAMPLES} samples on each side of every cell")
    if quantifier in (EVERY, MOST, SOME):
        return _at_least(m, cells, band, quantifier, held)
    verdict, reason = judge(m, band, show)  # mean, about: the mean of the cells
    if verdict != INCONCLUSIVE:
        return Judgement(verdict, reason, held, "")
    factor = _settle([m.cell()], band, 1)
    return Judgement(verdict, reason, held, settle_text(factor), settle_factor=factor)


def _at_least(m: Measure, cells: list[CellEstimate], band: Band, quantifier: str, held: str) -> Judgement:
    n = len(cells)
    q = required_cells(quantifier, n)
    alpha_in, alpha_out = ALPHA / (n - q + 1), ALPHA / q
    ps = [p_values(c, band) for c in cells]
    shown_in = [c.label for c, (p_in, _) in zip(cells, ps) if p_in <= alpha_in]
    shown_out = [c.label for c, (_, p_out) in zip(cells, ps) if p_out <= alpha_out]
    shown = _shown(m, cells, band, quantifier, len(shown_in), alpha_in)
    if len(shown_in) >= q:
        level = f", each at {alpha_in:.2g} one-sided" if n > 1 else ""
        return Judgement(REPRODUCED, f"{len(shown_in)} of {n} cell{'s' if n > 1 else ''} shown inside the claim's "
                         f"range ({q} needed{level})", held, "", shown)  # fmt: skip
    if len(shown_out) >= n - q + 1:
        return Judgement(NOT_REPRODUCED, f"{len(shown_out)} of {n} cell{'s' if n > 1 else ''} shown outside the "
                         f"claim's range ({n - q + 1} refute it, each at {alpha_out:.2g} one-sided): "
                         f"{'; '.join(shown_out)}", held, "", shown)  # fmt: skip
    reason = (f"needs {q} of {n} cells shown inside (each at {alpha_in:.2g}) or {n - q + 1} outside (each at "
              f"{alpha_out:.2g}): {len(shown_in)} inside, {len(shown_out)} outside")  # fmt: skip
    factor = _settle(cells, band, q)
    return Judgement(INCONCLUSIVE, reason, held, settle_text(factor), shown, factor)


def _shown(m: Measure, cells, band: Band, quantifier: str, n_in: int, alpha_in: float) -> Measure:
    """What the table shows for a quantifier over cells: for every, the cell furthest from the
    range; for some, the best cell with its interval at the adjusted level; for most, the share
    of cells shown inside with its Wilson interval."""
    n = len(cells)
    if quantifier == MOST:
        share, low, high = share_ci(n_in, n)
        return Measure(f"share of {n} cells shown inside the range", share, low, high, MIN_SAMPLES, n)
    if quantifier == EVERY:
        c = min(cells, key=lambda c: margin_inside(*tested(c, band)))
        low, high = c.interval()
        what = f"the cell furthest from the range: {c.label}"
    else:
        c = max(cells, key=lambda c: margin_inside(*tested(c, band)))
        low, high = c.interval(1 - 2 * alpha_in)
        what = f"best of {n} cells: {c.label}" + (
            f" ({1 - 2 * alpha_in:.3g} CI, adjusted for {n} cells)" if n > 1 else ""
        )
    return Measure(what, c.estimate, low, high, m.n, n, se=c.sd, df=c.df, level=c.level, log_sign=c.log_sign)
