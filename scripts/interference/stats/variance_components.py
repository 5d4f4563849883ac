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


@dataclass(frozen=True)
class Components:
    """Relative variance components (squares of a CV) with their degrees of freedom."""

    iteration: float
    run: float
    df_iteration: int
    df_run: int

    @property
    def run_share(self) -> float:
        total = self.iteration + self.run
        return self.run / total if total > 0 else math.nan


def nested(values, cells, runs) -> Components:
    """The components of values (array) given each value's cell and run labels (a run label
    need only be unique within its cell)."""
    df = pd.DataFrame({"y": np.asarray(values, float), "cell": list(cells), "run": list(runs)})
    df = df[np.isfinite(df["y"])]
    df["y"] = df["y"] / df.groupby("cell")["y"].transform("mean")  # relative to the cell's level
    run_key = ["cell", "run"]
    run_mean = df.groupby(run_key)["y"].transform("mean")
    ss_within = float(((df["y"] - run_mean) ** 2).sum())
    per_run = df.groupby(run_key)["y"].agg(["size", "mean"])
    cell_of_run = per_run.index.get_level_values("cell")
    cell_mean = df.groupby("cell")["y"].mean().reindex(cell_of_run).to_numpy()
    ss_runs = float((per_run["size"] * (per_run["mean"] - cell_mean) ** 2).sum())
    n_total, n_runs, n_cells = len(df), len(per_run), df["cell"].nunique()
    df_within, df_runs = n_total - n_runs, n_runs - n_cells
    ms_within = ss_within / df_within if df_within > 0 else math.nan
    if df_runs <= 0:
        return Components(ms_within, math.nan, df_within, 0)
    # n0: the iterations per run of a balanced design with the same expected mean squares.
    cell_n = df.groupby("cell").size()
    sum_sq_over_cell = (per_run["size"] ** 2).groupby(level="cell").sum() / cell_n
    n0 = (n_total - float(sum_sq_over_cell.sum())) / df_runs
    ms_runs = ss_runs / df_runs
    run = max(0.0, (ms_runs - ms_within) / n0) if np.isfinite(ms_within) else math.nan
    return Components(ms_within, run, df_within, df_runs)


def mean_se(c: Components, runs: int, iterations: float) -> float:
    """The relative standard error of a cell's mean over `runs` runs of `iterations` each."""
    return math.sqrt(c.run / runs + c.iteration / (runs * iterations))


def ratio_ci(ratio: float, se_a: float, se_b: float, df: int) -> tuple[float, float]:
    """95 % CI of a ratio of two independent means with relative SEs se_a and se_b, on the log
    scale, t with the components' degrees of freedom."""
    se = math.hypot(se_a, se_b)
    t = stats.t.ppf(0.5 + CONFIDENCE / 2, df) if df > 0 else math.inf
    return ratio * math.exp(-t * se), ratio * math.exp(t * se)


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
