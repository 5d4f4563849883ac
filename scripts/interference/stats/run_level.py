"""A ratio of two groups' means with its 95 % CI at the level the data allow, for the studies
whose tables compare one cell with a reference cell (network, ping-pong, scaling).

Where each side has at least 2 runs, the interval covers runs: each side's relative variance
is split between its runs and their iterations (variance_components.nested), the mean's SE is
the runs' (moment_se), and the ratio's interval is t with Welch's df on the log scale
(variance_components.ratio_interval, as the pair study's IR). Where a side has one run, its
iterations share that run's start-up (placement, caches, the host's state), so their scatter
says nothing of how far a rerun moves: the interval is a bootstrap over iterations, labelled
`iterations`, and the findings decide nothing on it (findings/verdict.py: missing_level)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from interference.stats.resampling import bootstrap_ci
from interference.stats.variance_components import Components, nested, ratio_interval

# The levels an interval covers, as findings/inference.py names them (not imported from there:
# the findings rules' code inputs stay free of the statistics; tests/test_run_level.py checks they agree).
RUNS, ITERATIONS = "runs", "iterations"


@dataclass(frozen=True)
class LevelRatio:
    ratio: float
    low: float
    high: float
    method: str
    level: str
    df: float  # the t interval's (NaN: a bootstrap)
    runs: int
    baseline_runs: int
    note: str


def _ratio(x, base, axis=-1):
    return np.mean(x, axis=axis) / np.mean(base, axis=axis)


def _by_run(values: np.ndarray, runs: np.ndarray) -> list[np.ndarray]:
    return [values[runs == r] for r in sorted(set(runs.tolist()))]


def _components(values: np.ndarray, runs: np.ndarray) -> Components:
    """The side's nested components; with one value a run there is no within-run part, and the
    runs' relative variance is all there is."""
    c = nested(values, ["side"] * len(values), runs)
    if c.df_iteration > 0:
        return c
    var = float(np.var(values / values.mean(), ddof=1))
    return Components(0.0, var, 0, len(values) - 1, var)


def run_sd(values, runs) -> float:
    """The SD of a group's run means (NaN below 2 runs): the spread a ratio of two such groups'
    summaries needs at the runs level (findings' ratio_from_summaries)."""
    values, runs = np.asarray(values, float), np.asarray(runs).astype(str)
    means = [g.mean() for g in _by_run(values, runs)]
    return float(np.std(means, ddof=1)) if len(means) >= 2 else np.nan


def reference(x_runs, base_runs) -> LevelRatio:
    """The reference cell over itself: 1, with no interval (its samples are not a second group)."""
    return LevelRatio(
        1.0, np.nan, np.nan, "", "", np.nan, len(set(x_runs)), len(set(base_runs)), "the reference"
    )


def ratio_at_level(x, x_runs, base, base_runs, n_resamples: int, seed: int, key: tuple) -> LevelRatio:
    """mean(x) / mean(base) with its 95 % CI over runs where both sides have 2 runs or more, else
    over iterations (a bootstrap resampling both, seeded by seed and key)."""
    x, base = np.asarray(x, float), np.asarray(base, float)
    x_runs, base_runs = np.asarray(x_runs).astype(str), np.asarray(base_runs).astype(str)
    rx, rb = len(set(x_runs.tolist())), len(set(base_runs.tolist()))
    ratio = float(x.mean() / base.mean()) if len(x) and len(base) else np.nan
    if len(x) < 2 or len(base) < 2:
        return LevelRatio(ratio, np.nan, np.nan, "", "", np.nan, rx, rb, "fewer than 2 samples: no CI")
    if rx >= 2 and rb >= 2:
        iv = ratio_interval(
            _by_run(x, x_runs), _by_run(base, base_runs), _components(x, x_runs), _components(base, base_runs)
        )
        return LevelRatio(iv.ratio, iv.low, iv.high, "runs_t_welch", RUNS, iv.df, rx, rb, "")
    low, high, method, note = bootstrap_ci(x, base, _ratio, n_resamples, seed, key)
    one_run = "one run a side: the interval covers its iterations only, not how far a rerun moves"
    return LevelRatio(
        ratio, low, high, method, ITERATIONS, np.nan, rx, rb, "; ".join(n for n in (note, one_run) if n)
    )
