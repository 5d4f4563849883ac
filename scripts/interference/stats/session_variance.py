"""The uncertainty of a change between two sessions, at every level it has: iterations, runs and
sessions (Kalibera and Jones's levels of replication, one more up).

A session's cell mean carries the variance of its runs and their iterations (variance
components pooled over the cells of one subject: variance_components.nested). Two sessions of
the same definition differ by more than that: whatever a whole session shares (the boot, the
images, the host's state that day). Where two or more saved sessions of one definition exist,
today's value is predicted from their spread: the variance of a session's cell value about its
cell's level (its own error included, nothing subtracted), pooled over a subject's cells, with
the sessions' degrees of freedom (k − 1, however many cells). A change of today against one of
them then has the variance 2·spread (two draws of the same kind) plus whatever today's own error
exceeds the sessions' (a smaller run count), with a t of k − 1 degrees of freedom: with two
sessions t₁ = 12.7, which is what one degree of freedom can say. Subtracting the sessions' own
errors first (the method of moments) and truncating at 0 made an estimate from two sessions
collapse to 0 whenever they happened to agree, and the interval as narrow as if sessions did
not differ (docs/sessions.md). The spread less the own errors (`Between.excess`) is still the
variance component the session_variance table reports.

Many cells are judged at once: `p_changed` is each change's p-value against the threshold (the
probability of an interval this far beyond ±threshold if the change were at the threshold), and
the regression check (stores/sessions.py) applies Holm's procedure to them, so that the chance
that it fails on a host where nothing changed stays at 5 % however many cells it reads."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from interference.stats import run_level
from interference.stats.descriptive import CONFIDENCE
from interference.stats.variance_components import nested

CHANGED, UNCHANGED, INCONCLUSIVE = "changed", "unchanged", "inconclusive"
RUNS = "runs and iterations"
ITERATIONS = "iterations only"


# The levels of an interval that leaves out the variation between runs: one run a cell, its
# iterations (or a paired run's blocks) only; the pair study's words and the other studies'
# (stats/run_level.py). Two sessions of the same code, one run a cell,
# were called changed in 19 of 208 cells by such intervals (scripts/actions.sh, the regression
# job's second run, 2026-11-28): they judge nothing.
WITHIN_ONE_RUN = (ITERATIONS, "blocks of one run, paired", run_level.ITERATIONS)
NO_VERDICT = "no verdict: the interval covers one run's iterations only"


def verdict(low: float, high: float, threshold: float, covers_runs: bool = True) -> str:
    """The rule: a CI beyond ±threshold has changed, one within it has not, else we cannot say;
    nor when the CI leaves out the variation between runs (covers_runs false)."""
    if not (covers_runs and math.isfinite(low) and math.isfinite(high)):
        return INCONCLUSIVE
    if low > threshold or high < -threshold:
        return CHANGED
    if -threshold <= low and high <= threshold:
        return UNCHANGED
    return INCONCLUSIVE


@dataclass(frozen=True)
class MeanError:
    """A mean's squared standard error (relative to the mean for a cell mean) with its degrees
    of freedom and the levels it covers."""

    var: float
    df: float
    level: str


@dataclass(frozen=True)
class Between:
    """What saved sessions of one definition say about the next one: the pooled variance of a
    session's (relative) value about its cell's level, its own error included (spread); the
    sessions' own squared errors, averaged (own); and the degrees of freedom (k − 1; 0: none
    estimated, fewer than two sessions)."""

    spread: float = 0.0
    own: float = 0.0
    df: float = 0.0

    @property
    def excess(self) -> float:
        """The variance component between sessions (method of moments, truncated at 0)."""
        return max(0.0, self.spread - self.own)


NONE = Between()


def cell_errors(
    runs: dict[tuple, list[np.ndarray]], subject: Callable[[tuple], tuple]
) -> dict[tuple, MeanError]:
    """Each cell's relative squared standard error of its mean: runs/r + iterations/(r·n) from
    the components of its subject's cells where some cell ran twice, else the iterations'
    variance over all its values (the level says which)."""
    by_subject = defaultdict(list)
    for key in runs:
        by_subject[subject(key)].append(key)
    out = {}
    for keys in by_subject.values():
        values, cells, labels = [], [], []
        for key in keys:
            for r, v in enumerate(runs[key]):
                values += list(v)
                cells += [key] * v.size
                labels += [r] * v.size
        c = nested(values, cells, labels)
        for key in keys:
            r, n = len(runs[key]), sum(v.size for v in runs[key])
            if c.df_run > 0 and math.isfinite(c.iteration) and math.isfinite(c.run) and n:
                out[key] = MeanError(c.run / r + c.iteration / n, c.df_run, RUNS)
            elif c.df_iteration > 0 and math.isfinite(c.iteration) and n:
                out[key] = MeanError(c.iteration / n, c.df_iteration, ITERATIONS)
            else:
                out[key] = MeanError(math.nan, 0, "")
    return out


def session_spread(cells: Iterable[tuple[np.ndarray, np.ndarray]]) -> Between:
    """The spread of sessions about their cells' levels, pooled over cells: each cell gives its
    sessions' values and their squared standard errors; a cell in fewer than two sessions gives
    nothing. The degrees of freedom are the sessions' less one, not the cells': a session's
    effect is shared by all its cells, so more cells do not make more sessions."""
    spread = own = den = 0.0
    sessions = 0
    for values, variances in cells:
        ok = np.isfinite(values) & np.isfinite(variances)
        values, variances = values[ok], variances[ok]
        k = values.size
        if k < 2:
            continue
        spread += (k - 1) * values.var(ddof=1)
        own += (k - 1) * variances.mean()
        den += k - 1
        sessions = max(sessions, k)
    return Between(spread / den, own / den, sessions - 1) if den else NONE


def between_sessions(
    sessions: list[tuple[dict[tuple, float], dict[tuple, MeanError]]], subject: Callable[[tuple], tuple]
) -> dict[tuple, Between]:
    """Per subject, the relative variance between sessions of one definition, from each
    session's cell means and their errors (each cell's means taken relative to their average)."""
    by_subject = defaultdict(list)
    for key in set().union(*(means.keys() for means, _ in sessions)) if sessions else ():
        found = [(m[key], e[key].var) for m, e in sessions if key in m and key in e]
        if len(found) < 2:
            continue
        means, variances = (np.array(x, float) for x in zip(*found))
        level = means.mean()
        if level == 0 or not math.isfinite(level):
            continue
        by_subject[subject(key)].append((means / level, variances))
    return {s: session_spread(cells) for s, cells in by_subject.items()}


def between_runs(
    sessions: list[dict[tuple, list[np.ndarray]]], subject: Callable[[tuple], tuple]
) -> dict[tuple, Between]:
    """between_sessions from each session's values per cell and run (their means and errors)."""
    return between_sessions(
        [
            ({k: np.concatenate(v).mean() for k, v in runs.items()}, cell_errors(runs, subject))
            for runs in sessions
        ],
        subject,
    )


def satterthwaite(parts: list[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variances, each with its own (inf for
    a normal one); parts that are 0 carry no weight."""
    parts = [(v, d) for v, d in parts if v > 0]
    if any(d <= 0 for _, d in parts):
        return 0.0  # a variance without degrees of freedom: no interval
    denominator = sum(v * v / d for v, d in parts if d != math.inf)
    return sum(v for v, _ in parts) ** 2 / denominator if denominator else math.inf


def _t(df: float) -> float:
    q = 0.5 + CONFIDENCE / 2
    if df == math.inf:
        return stats.norm.ppf(q)
    return stats.t.ppf(q, df) if df > 0 else math.nan


def _change_variance(now_var: float, now_df: float, then_var: float, then_df: float, between: Between):
    """The variance of today's value less a session's, and its parts (variance, df): from the
    sessions' spread where two or more measured it, else from the two sessions' own errors."""
    if between.df:
        parts = [(2 * between.spread, between.df), (max(0.0, now_var - between.own), now_df)]
    else:
        parts = [(now_var, now_df), (then_var, then_df)]
    return sum(v for v, _ in parts), satterthwaite(parts)


def beyond_p(estimate: float, se: float, df: float, lower: float, upper: float) -> float:
    """The p-value that an estimate lies beyond [lower, upper] (a one-sided test on the side it
    fell, doubled, so that p < 0.05 exactly when the 95 % interval lies beyond the range)."""
    if not (math.isfinite(estimate) and se > 0 and df > 0):
        return math.nan
    # The t's sf and cdf called with df: a frozen distribution costs a millisecond a call.
    dist, args = (stats.norm, ()) if df == math.inf else (stats.t, (df,))
    if estimate >= (lower + upper) / 2:
        side = dist.sf((estimate - upper) / se, *args)
    else:
        side = dist.cdf((estimate - lower) / se, *args)
    return min(1.0, 2 * side)


def relative_change_ci(
    now: float, now_error: MeanError, then: float, then_error: MeanError, between: Between, higher: bool,
    threshold: float = 0.0,
) -> tuple[float, float, float, float]:  # fmt: skip
    """95 % CI of the relative change of today's mean against the session's (negative is worse),
    with its degrees of freedom and the p-value that it lies beyond ±threshold: the ratio's
    interval on the log scale."""
    var, df = _change_variance(now_error.var, now_error.df, then_error.var, then_error.df, between)
    se, t = math.sqrt(var), _t(df)
    if not (math.isfinite(se) and math.isfinite(t)) or now <= 0 or then <= 0:
        return math.nan, math.nan, df, math.nan
    ratio = now / then
    low, high = ratio * math.exp(-t * se), ratio * math.exp(t * se)
    # Beyond ±threshold in either orientation is the ratio beyond [1 − t, 1 + t].
    p = beyond_p(math.log(ratio), se, df, math.log(max(1e-12, 1 - threshold)), math.log(1 + threshold))
    return ((low - 1, high - 1) if higher else (1 - high, 1 - low)) + (df, p)


def difference_ci(
    now: float, now_se: float, then: float, then_se: float, between: Between, threshold: float = 0.0
) -> tuple[float, float, float, float]:
    """95 % CI of now − then for two values from tables with normal CIs (or the sessions' spread
    where two or more measured it), its degrees of freedom and the p-value that it lies beyond
    ±threshold."""
    var, df = _change_variance(now_se**2, math.inf, then_se**2, math.inf, between)
    se, t = math.sqrt(var), _t(df)
    if not (math.isfinite(se) and math.isfinite(t)):
        return math.nan, math.nan, df, math.nan
    d = now - then
    return d - t * se, d + t * se, df, beyond_p(d, se, df, -threshold, threshold)


COMPONENT_COLUMNS = ["sessions", "subject", "iteration", "run", "session", "session_share", "df_session"]


def components_table(
    sessions: dict[str, dict[tuple, list[np.ndarray]]], subject: Callable[[tuple], tuple]
) -> list[dict]:
    """Per subject, over saved sessions of one definition ({name: {cell: runs}}): the relative
    variance between iterations and between runs within a session (nested components of all
    the sessions' cells) and between sessions, with the sessions' share of the three."""
    if len(sessions) < 2:
        return []
    between = between_runs(list(sessions.values()), subject)
    rows = []
    for subj, b in sorted(between.items()):
        values, cells, labels = [], [], []
        for name, runs in sessions.items():
            for key, rs in runs.items():
                if subject(key) != subj:
                    continue
                for r, v in enumerate(rs):
                    values += list(v)
                    cells += [(name, key)] * v.size
                    labels += [r] * v.size
        c = nested(values, cells, labels)
        total = c.iteration + (c.run if math.isfinite(c.run) else 0.0) + b.excess
        rows.append({
            "sessions": ", ".join(sessions), "subject": " ".join(subj), "iteration": c.iteration,
            "run": c.run, "session": b.excess, "session_share": b.excess / total if total > 0 else math.nan,
            "df_session": b.df,
        })  # fmt: skip
    return rows
