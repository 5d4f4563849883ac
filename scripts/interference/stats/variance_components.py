"""Variance at each level of a measurement: iterations nested in runs, runs nested in cells.

Kalibera and Jones (Rigorous benchmarking in reasonable time, ISMM 2013) make the run the unit of
replication: iterations of one run share its start-up state (placement, page cache, frequency),
so their scatter says nothing of how much a rerun moves. Here the two components are estimated
by the nested ANOVA (method of moments) on values relative to their cell's mean, so that cells
of one microservice and metric with different levels (cases, partners) pool into one estimate
with the degrees of freedom of all of them:

  iteration  the relative variance of iterations within a run (mean square within runs)
  run        the relative variance of a run's mean about its cell's mean beyond what its
             iterations explain: (MS_runs - MS_iterations) / n0, truncated at 0

A cell's mean with r runs of n iterations then has the relative variance run/r + iteration/(r n)
(its standard error, mean_se), and the cost model gives the iterations per run and the runs that
reach a target precision at the least time (recommend)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from interference.stats.descriptive import CONFIDENCE


def runs_of(frame: pd.DataFrame) -> list[np.ndarray]:
    """A cell's values per run (its column repetition), runs in order, each run's values sorted: a
    resample (hence a CI) then depends on the values, not on the row order."""
    # One sort by (repetition, value) and a split where the repetition changes: a groupby per
    # group cost a third of the calibration simulations' time. Rows without a repetition are
    # left out, as groupby leaves them.
    reps, values = frame["repetition"].to_numpy(), frame["value"].to_numpy()
    kept = pd.notna(reps)
    reps, values = reps[kept], values[kept]
    order = np.lexsort((values, reps))
    reps, values = reps[order], values[order]
    return np.split(values, np.flatnonzero(reps[1:] != reps[:-1]) + 1) if len(values) else []


@dataclass(frozen=True)
class Components:
    """Relative variance components (squares of a CV) with their degrees of freedom."""

    iteration: float
    run: float
    df_iteration: int
    df_run: int
    # The run component's moment estimate before truncation at 0 (may be negative): the SE of a
    # mean from it is MS_runs / (runs × iterations) in a balanced design, the exact t's.
    run_moment: float = math.nan

    @property
    def run_share(self) -> float:
        total = self.iteration + self.run
        return self.run / total if total > 0 else math.nan


def nested(values, cells, runs) -> Components:
    """The components of values (array) given each value's cell and run labels (a run label
    need only be unique within its cell)."""
    # Integer codes and bincount, not a DataFrame's groupby: the calibration simulations call
    # this thousands of times (docs/statistics.md#calibration).
    y = np.asarray(values, float)
    cell_label = pd.factorize(pd.Series(list(cells), dtype=object))[0]
    run_label = pd.factorize(pd.Series(list(runs), dtype=object))[0]
    keep = np.isfinite(y)
    y, cell_label, run_label = y[keep], cell_label[keep], run_label[keep]
    if y.size == 0:
        return Components(math.nan, math.nan, 0, 0)
    cell = pd.factorize(cell_label)[0]
    run = pd.factorize(cell * (int(run_label.max()) + 1) + run_label)[0]
    n_cell = np.bincount(cell)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = y / (np.bincount(cell, y) / n_cell)[cell]  # relative to the cell's level
    n_run = np.bincount(run)
    run_mean = np.bincount(run, y) / n_run
    cell_of_run = np.empty(n_run.size, int)
    cell_of_run[run] = cell
    ss_within = float(((y - run_mean[run]) ** 2).sum())
    ss_runs = float((n_run * (run_mean - 1.0) ** 2).sum())  # each cell's mean is 1 now
    n_total, n_runs, n_cells = y.size, n_run.size, n_cell.size
    df_within, df_runs = n_total - n_runs, n_runs - n_cells
    ms_within = ss_within / df_within if df_within > 0 else math.nan
    if df_runs <= 0:
        return Components(ms_within, math.nan, df_within, 0)
    # n0: the iterations per run of a balanced design with the same expected mean squares.
    sum_sq_over_cell = np.bincount(cell_of_run, n_run.astype(float) ** 2) / n_cell
    n0 = (n_total - float(sum_sq_over_cell.sum())) / df_runs
    ms_runs = ss_runs / df_runs
    moment = (ms_runs - ms_within) / n0 if np.isfinite(ms_within) else math.nan
    return Components(
        ms_within, max(0.0, moment) if np.isfinite(moment) else math.nan, df_within, df_runs, moment
    )


def mean_se(c: Components, runs: int, iterations: float) -> float:
    """The relative standard error of a cell's mean over `runs` runs of `iterations` each."""
    return math.sqrt(c.run / runs + c.iteration / (runs * iterations))


def ratio_ci(ratio: float, se_a: float, se_b: float, df: int) -> tuple[float, float]:
    """95 % CI of a ratio of two independent means with relative SEs se_a and se_b, on the log
    scale, t with the components' degrees of freedom."""
    se = math.hypot(se_a, se_b)
    t = (
        (stats.t.ppf(0.5 + CONFIDENCE / 2, df) if math.isfinite(df) else stats.norm.ppf(0.5 + CONFIDENCE / 2))
        if df > 0
        else math.inf
    )
    return ratio * math.exp(-t * se), ratio * math.exp(t * se)


def welch_df(var_a: float, df_a: float, var_b: float, df_b: float) -> float:
    """Welch and Satterthwaite's degrees of freedom of var_a + var_b, two independent variance
    estimates with df_a and df_b degrees of freedom."""
    terms = [v * v / d for v, d in ((var_a, df_a), (var_b, df_b)) if v > 0 and d > 0]
    return (var_a + var_b) ** 2 / sum(terms) if terms else math.inf


@dataclass(frozen=True)
class RatioInterval:
    """A ratio of two sides' means with its 95 % CI: each side's relative SE from its own
    components (se_x, se_b, with their df), the interval's degrees of freedom (df)."""

    ratio: float
    low: float
    high: float
    se_x: float
    se_b: float
    df_x: float
    df_b: float
    df: float


ITERATION_FLOOR = 0.5  # of the iterations' part of a mean's variance, the least moment_se gives


def moment_se(c: Components, sizes) -> float:
    """A mean's relative SE over runs of `sizes` iterations each, from the untruncated run
    component: run_moment·Σwᵢ² + iteration/N, wᵢ = nᵢ/N, the variance of the iteration-weighted
    mean with a run effect (unbiased whatever the moment's sign). Balanced, Σwᵢ² = 1/r and it is
    MS_runs/(r·n), whose t with the runs' df is exact; truncating a negative moment at 0 made the
    interval too wide, most where runs vary little beyond their iterations. Floored at half the
    iterations' part (ITERATION_FLOOR): with runs of unequal length (an adaptive window's 2 and 8
    iterations) a tenth let contrasts of two cases cover 88-92 %, half 92-97 %, all of it up to 99 %
    (simulated, docs/statistics.md#calibration)."""
    sizes = np.asarray(sizes, float)
    n_total = sizes.sum()
    moment = c.run_moment if math.isfinite(c.run_moment) else c.run
    its = c.iteration / n_total
    return math.sqrt(max(moment * float(((sizes / n_total) ** 2).sum()) + its, ITERATION_FLOOR * its))


def ratio_interval(x_runs: list, b_runs: list, c_x: Components, c_b: Components) -> RatioInterval:
    """mean(x) / mean(b) where each side's runs have their own variance components (the same
    object for both: one estimate, its df; two: Welch's df), the interval on the log scale."""
    mx, mb = np.concatenate(x_runs).mean(), np.concatenate(b_runs).mean()
    se_x = moment_se(c_x, [r.size for r in x_runs])
    se_b = moment_se(c_b, [r.size for r in b_runs])
    df = c_x.df_run if c_x is c_b else welch_df(se_x**2, c_x.df_run, se_b**2, c_b.df_run)
    low, high = ratio_ci(mx / mb, se_x, se_b, df)
    return RatioInterval(mx / mb, low, high, se_x, se_b, c_x.df_run, c_b.df_run, df)


def recommend(c: Components, run_cost_s: float, iteration_s: float, half_width: float = 0.05):
    """(iterations per run, runs) that give a 95 % CI of a cell's mean within +-half_width
    (relative) at the least time (Kalibera and Jones's two-level cost model: the optimal
    iterations per run is sqrt(run cost / iteration cost × iteration variance / run variance))."""
    if not (np.isfinite(c.iteration) and np.isfinite(c.run)):
        return None, None
    if c.run <= 0:
        n = max(2, math.ceil((1.96 / half_width) ** 2 * c.iteration))
        return n, 1
    n = max(1, round(math.sqrt(run_cost_s / max(iteration_s, 1e-9) * c.iteration / c.run)))
    r = max(2, math.ceil((1.96 / half_width) ** 2 * (c.run + c.iteration / n)))
    return n, r
