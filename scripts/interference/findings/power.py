"""The probability that a finding's verdict rule reproduces it, given the true values of its
cells and the noise a measurement of them would carry: the power a plan buys (steps/verdict_price).

A cell is an IR of a target beside a partner, a ratio of the concurrent side's mean to its
target's baseline mean: to first order its estimate is μ + ρ·(e_cell - e_baseline), ρ the
ratio's size (1 + μ where higher is better, 1 - μ where lower is: the tables' IR is then
1 - x/b), the relative errors normal with the variances given (the variance components'
run/r + iteration/(r·n)), the baseline's shared by every cell of the target (one Case 1 mean
divides every IR of a target). As in the statistics tables (ir_components_ci), each side's
variance is estimated, from the target's concurrent runs and its Case 1 runs, with their degrees
of freedom: each simulated measurement draws those estimates (σ²·χ²_df/df), a cell's interval is
t with Welch's df of its two sides, and a mean's is inference.linear's (Satterthwaite's df over
the pieces, at most the largest piece's). The rule is findings.claims': each cell's one-sided
tests at ALPHA adjusted for the quantifier (every, most, some), or the mean of the cells against
the range (mean, about); a cell's tests on the IR's scale, which to first order are those on
log(ratio) the rule reads a table's cell on (inference.on_test_scale). tests/test_power.py
checks the probability against the real rule (claims.judge_claim) fed the same simulated cells,
and against a hand computation for one cell."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special  # not scipy.stats: imported while the Snakefile plans (inference.py)

from interference.findings.claims import ABOUT, MEAN, required_cells
from interference.findings.inference import ALPHA
from interference.findings.verdict import Band

DRAWS = 4000
SEED = 52


@dataclass(frozen=True)
class Cells:
    """A finding's cells: their true IRs (mu), the size of each one's ratio (rho), each cell's
    target index (target), the relative variance of a cell's concurrent mean (var_cell, per
    cell) and of each target's baseline mean (var_base, per target), and the degrees of freedom
    of each target's concurrent and alone variance estimates (df_cell, df_base, per target; inf:
    known)."""

    mu: np.ndarray
    rho: np.ndarray
    target: np.ndarray
    var_cell: np.ndarray
    var_base: np.ndarray
    df_cell: np.ndarray
    df_base: np.ndarray

    def draws(self, n: int = DRAWS, seed: int = SEED) -> Draws:
        """n simulated measurements: the estimates and each target's variance estimates as
        multiples of the true ones."""
        rng = np.random.default_rng(seed)
        e_cell = rng.standard_normal((n, len(self.mu))) * np.sqrt(self.var_cell)
        e_base = rng.standard_normal((n, len(self.var_base))) * np.sqrt(self.var_base)
        x = self.mu + self.rho * (e_cell - e_base[:, self.target])
        return Draws(self, x, _scale(rng, self.df_cell, n), _scale(rng, self.df_base, n))


def _scale(rng, df: np.ndarray, n: int) -> np.ndarray:
    """Variance estimates over their true values: χ²_df/df (1 where df is infinite)."""
    finite = np.where(np.isfinite(df), df, 1.0)
    return np.where(np.isfinite(df), rng.chisquare(finite, (n, len(df))) / finite, 1.0)


def linear_df(pieces: np.ndarray, df: np.ndarray) -> np.ndarray:
    """inference.linear's df for each row of variance pieces: Welch and Satterthwaite's
    (inference.satterthwaite), at most the df of the row's largest piece."""
    finite = np.isfinite(df)
    denom = np.where(finite, pieces**2 / np.where(finite, df, 1.0), 0.0).sum(axis=1)
    total = pieces.sum(axis=1)
    out = np.where(denom > 0, total**2 / np.where(denom > 0, denom, 1.0), np.inf)
    return np.minimum(out, df[np.argmax(pieces, axis=1)])


@dataclass(frozen=True)
class Draws:
    cells: Cells
    x: np.ndarray  # n × cells: the estimates
    u_cell: np.ndarray  # n × targets: concurrent variance estimates over the true ones
    u_base: np.ndarray  # n × targets: alone variance estimates over the true ones

    def own(self) -> np.ndarray:
        """n × cells: each cell's own variance as estimated."""
        c = self.cells
        return c.rho**2 * c.var_cell * self.u_cell[:, c.target]

    def loading(self) -> np.ndarray:
        """n × cells: each cell's loading on its target's baseline, as estimated."""
        c = self.cells
        return c.rho * np.sqrt(c.var_base[c.target] * self.u_base[:, c.target])

    def cell_se_df(self) -> tuple[np.ndarray, np.ndarray]:
        """Each cell's standard error and Welch's df of its two sides."""
        own, load = self.own(), self.loading()
        var = own + load**2
        c = self.cells
        d_own, d_base = c.df_cell[c.target], c.df_base[c.target]
        terms = np.where(np.isfinite(d_own), own**2 / np.where(np.isfinite(d_own), d_own, 1), 0)
        terms = terms + np.where(np.isfinite(d_base), load**4 / np.where(np.isfinite(d_base), d_base, 1), 0)
        df = np.where(terms > 0, var**2 / np.where(terms > 0, terms, 1), np.inf)
        return np.sqrt(var), df

    def mean_se_df(self) -> tuple[np.ndarray, np.ndarray]:
        """The unweighted mean's standard error and df (inference.linear: own pieces by target,
        the shared loadings summed by target)."""
        c = self.cells
        n, k = len(c.mu), len(c.var_base)
        w = 1.0 / n
        own = np.stack([(w**2 * self.own()[:, c.target == t]).sum(axis=1) for t in range(k)], axis=1)
        shared = np.stack([(w * self.loading()[:, c.target == t]).sum(axis=1) ** 2 for t in range(k)], axis=1)
        pieces = np.concatenate([own, shared], axis=1)
        df = linear_df(pieces, np.concatenate([c.df_cell, c.df_base]))
        return np.sqrt(pieces.sum(axis=1)), df


def p_shown_inside(x, se, df, band: Band) -> np.ndarray:
    """The p-value of "outside the range" (the larger of the one-sided tests at each finite
    edge), elementwise: small where x is shown inside."""
    ps = []
    if math.isfinite(band.low):
        ps.append(special.stdtr(df, -(x - band.low) / se))  # t's survival function
    if math.isfinite(band.high):
        ps.append(special.stdtr(df, -(band.high - x) / se))
    return np.maximum.reduce(ps) if ps else np.zeros_like(x)


def p_reproduced(cells: Cells, band: Band, quantifier: str, n: int = DRAWS, seed: int = SEED) -> float:
    """The share of n simulated measurements whose verdict is "reproduced" (0 where a side has
    no degrees of freedom: the rule then says inconclusive)."""
    if not (np.all(cells.df_cell > 0) and np.all(cells.df_base > 0)):
        return 0.0
    d = cells.draws(n, seed)
    if quantifier in (MEAN, ABOUT):
        se, df = d.mean_se_df()
        return float(np.mean(p_shown_inside(d.x.mean(axis=1), se, df, band) <= ALPHA))
    k = d.x.shape[1]
    q = required_cells(quantifier, k)
    se, df = d.cell_se_df()
    p = p_shown_inside(d.x, se, df, band)
    return float(np.mean((p <= ALPHA / (k - q + 1)).sum(axis=1) >= q))
