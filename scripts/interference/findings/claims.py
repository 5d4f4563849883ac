"""A claim read with the quantifier its paper's sentence carries.

Each catalogue entry names one (report/published/findings.yaml, `quantifier`):
  every  it holds in every cell: one cell whose 95 % CI lies wholly outside the claim's range
         refutes it; every cell wholly inside confirms it. Ours is the cell that decides (the one
         furthest from the range).
  mean   the pooled effect (a random-effects mean of the cells, findings.pooling) against the range.
  most   more than half of the cells lie conclusively inside: reproduced when they do, not
         reproduced when at least half lie conclusively outside. Ours is the share inside, with
         its Wilson interval.
  some   at least one cell: the best cell, its CI widened for having been picked among n
         (Bonferroni, alpha/n: Holm's first step). Not reproduced only when every cell's widened
         CI lies outside.
  about  a figure matched within an equivalence range: the pooled effect's CI inside the range.
Every verdict carries "holds in k of n cells" (each cell judged by its own CI), and an
inconclusive one says what would settle it: nothing, when the cells disagree (some conclusively
inside, some outside), else about how many times the runs per cell would narrow the CI past
the range's edge (the CI's half-width shrinks with the square root of the samples)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from interference.findings.verdict import (
    INCONCLUSIVE,
    MIN_SAMPLES,
    NOT_REPRODUCED,
    REPRODUCED,
    Band,
    CellEstimate,
    Measure,
    judge,
    share_ci,
)
from interference.stats.descriptive import CONFIDENCE

EVERY, MEAN, MOST, SOME, ABOUT = "every", "mean", "most", "some", "about"
QUANTIFIERS = (EVERY, MEAN, MOST, SOME, ABOUT)
INSIDE, OUTSIDE, STRADDLES = "inside", "outside", "straddles"
DISAGREE = "cells disagree: more samples will not settle it"


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


def position(low: float, high: float, band: Band) -> str:
    """Where a CI lies against the claim's range."""
    if band.contains(low) and band.contains(high):
        return INSIDE
    if high < band.low or low > band.high:
        return OUTSIDE
    return STRADDLES


def cells_of(m: Measure) -> list[CellEstimate]:
    """The measure's cells; a measure of one comparison is its own cell."""
    return list(m.by_cell) or [CellEstimate(m.what, m.estimate, m.low, m.high)]


def positions(cells: list[CellEstimate], band: Band) -> list[str]:
    return [position(c.low, c.high, band) for c in cells]


def holds_in(places: list[str]) -> str:
    n_in, n_out = places.count(INSIDE), places.count(OUTSIDE)
    text = f"{n_in} of {len(places)} cell{'s' if len(places) != 1 else ''}"
    return text + (f" ({n_out} conclusively outside)" if n_out else "")


def distance_outside(c: CellEstimate, band: Band) -> float:
    """How far a cell's estimate lies from the range (negative: inside, by its margin)."""
    if band.contains(c.estimate):
        return -min(c.estimate - band.low, band.high - c.estimate)
    return band.low - c.estimate if c.estimate < band.low else c.estimate - band.high


def samples_factor(estimate: float, low: float, high: float, band: Band) -> float:
    """How many times the samples would bring the CI's half-width under the estimate's distance
    from the nearest edge of the range (inf: the estimate sits on the edge)."""
    half = (high - low) / 2
    edges = [e for e in (band.low, band.high) if math.isfinite(e)]
    margin = min(abs(estimate - e) for e in edges)
    return math.inf if margin == 0 else max(1.0, (half / margin) ** 2)


def settle_text(factor: float) -> str:
    if not math.isfinite(factor) or factor > 100:
        return "the estimate lies on the range's edge: no practical number of samples settles it"
    # The run is the unit: more iterations of the same runs do not narrow the variance between runs.
    return (
        f"about {math.ceil(factor * 10) / 10:g}× the runs per cell would narrow the CI past the range's edge"
    )


def _adjusted(c: CellEstimate, k: int) -> CellEstimate:
    """A cell's CI widened to the Bonferroni level alpha/k (a normal approximation of its SE)."""
    z = stats.norm.ppf(0.5 + CONFIDENCE / 2)
    z_adj = stats.norm.ppf(1 - (1 - CONFIDENCE) / (2 * k))
    se = (c.high - c.low) / (2 * z)
    return CellEstimate(c.label, c.estimate, c.estimate - z_adj * se, c.estimate + z_adj * se)


def judge_claim(m: Measure, band: Band, quantifier: str, show=lambda x: f"{x:g}") -> Judgement:
    """The verdict of one finding: its measure read with the claim's quantifier."""
    cells = cells_of(m)
    places = positions(cells, band)
    held = holds_in(places)
    disagree = INSIDE in places and OUTSIDE in places
    if m.n < MIN_SAMPLES:
        verdict, reason = judge(m, band, show)
        return Judgement(verdict, reason, held, f"at least {MIN_SAMPLES} samples on each side of every cell")
    if quantifier == EVERY:
        return _every(m, cells, places, band, held, show)
    if quantifier == MOST:
        return _most(cells, places, held, band)
    if quantifier == SOME:
        return _some(cells, band, held, show)
    verdict, reason = judge(m, band, show)  # mean, about: the pooled effect
    if verdict != INCONCLUSIVE:
        return Judgement(verdict, reason, held, "")
    if disagree:
        return Judgement(verdict, reason + f"; {DISAGREE} (the cells differ: {held})", held, DISAGREE)
    factor = samples_factor(m.estimate, m.low, m.high, band)
    return Judgement(verdict, reason, held, settle_text(factor), settle_factor=factor)


def _every(m, cells, places, band, held, show) -> Judgement:
    worst = max(range(len(cells)), key=lambda i: distance_outside(cells[i], band))
    w = cells[worst]
    shown = Measure(
        f"the cell furthest from the range: {w.label}", w.estimate, w.low, w.high, m.n, len(cells)
    )
    if OUTSIDE in places:
        failing = [c.label for c, p in zip(cells, places) if p == OUTSIDE]
        return Judgement(
            NOT_REPRODUCED,
            f"fails in {len(failing)} of {len(cells)} cells: {'; '.join(failing)}",
            held,
            "",
            shown,
        )
    if all(p == INSIDE for p in places):
        return Judgement(
            REPRODUCED, f"every cell's 95 % CI lies inside the claim's range ({held})", held, "", shown
        )
    open_cells = [c for c, p in zip(cells, places) if p == STRADDLES]
    factor = max(samples_factor(c.estimate, c.low, c.high, band) for c in open_cells)
    reason = f"no cell outside the range, but {len(open_cells)} of {len(cells)} straddle its edge"
    return Judgement(INCONCLUSIVE, reason, held, settle_text(factor), shown, factor)


def _most(cells, places, held, band) -> Judgement:
    n, n_in, n_out = len(cells), places.count(INSIDE), places.count(OUTSIDE)
    share, low, high = share_ci(n_in, n)
    shown = Measure(f"share of {n} cells conclusively inside the range", share, low, high, MIN_SAMPLES, n)
    if n_in > n / 2:
        return Judgement(
            REPRODUCED, f"{n_in} of {n} cells lie conclusively inside (more than half)", held, "", shown
        )
    if n_out >= n / 2:
        return Judgement(NOT_REPRODUCED, f"{n_out} of {n} cells lie conclusively outside", held, "", shown)
    reason = f"{n_in} inside and {n_out} outside of {n} cells; the others straddle the range's edge"
    if n_in and n_out and n_in + n_out == n:
        return Judgement(INCONCLUSIVE, reason, held, DISAGREE, shown)
    # The straddling cells decide it: the runs that bring the furthest of them off the edge.
    factor = max(
        samples_factor(c.estimate, c.low, c.high, band) for c, p in zip(cells, places) if p == STRADDLES
    )
    return Judgement(INCONCLUSIVE, reason, held, settle_text(factor), shown, factor)


def _some(cells, band, held, show) -> Judgement:
    k = len(cells)
    adjusted = [_adjusted(c, k) for c in cells]
    best = min(range(k), key=lambda i: distance_outside(cells[i], band))
    b = adjusted[best]
    what = f"best of {k} cells: {b.label}" + (f" (CI widened for {k} cells, Bonferroni)" if k > 1 else "")
    shown = Measure(what, b.estimate, b.low, b.high, MIN_SAMPLES, k)
    places = positions(adjusted, band)
    if INSIDE in places:
        return Judgement(
            REPRODUCED, f"a cell's adjusted 95 % CI lies inside the claim's range ({held})", held, "", shown
        )
    if all(p == OUTSIDE for p in places):
        return Judgement(
            NOT_REPRODUCED, "every cell's adjusted 95 % CI lies outside the claim's range", held, "", shown
        )
    factor = samples_factor(b.estimate, b.low, b.high, band)
    return Judgement(INCONCLUSIVE, "the best cell's adjusted CI straddles the range's edge", held,
                     settle_text(factor), shown, factor)  # fmt: skip
