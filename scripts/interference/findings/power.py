"""The probability that a finding's verdict rule reproduces it, given the true values of its
cells and the noise a measurement of them would carry: the power a plan buys (steps/verdict_price).

A cell is an IR of a target beside a partner: ρ·(1 + e_cell)/(1 + e_baseline) - 1 with ρ = 1 +
its true IR, the relative errors of its concurrent side's mean and of its target's baseline mean
normal with the variances given (the variance components' run/r + iteration/(r·n)), the
baseline's shared by every cell of the target (as in the statistics tables: one Case 1 mean
divides every IR of a target). To first order an estimate is μ + ρ·(e_cell - e_baseline), and
its standard error the one the tables would give. The rule is findings.claims': each cell's
one-sided tests at ALPHA adjusted for the quantifier (every, most, some), or the mean of the
cells against the range (mean, about), t with the degrees of freedom given. The standard
errors are taken as known here; tests/test_power.py checks the probability against the real
rule (claims.judge_claim) fed simulated cells, and against a hand computation for one cell."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from interference.findings.claims import ABOUT, MEAN, required_cells
from interference.findings.inference import ALPHA
from interference.findings.verdict import Band

DRAWS = 4000
SEED = 52


@dataclass(frozen=True)
class Cells:
    """A finding's cells: their true IRs (mu), each cell's target index (target), the relative
    variance of a cell's concurrent mean (var_cell, per cell) and of each target's baseline mean
    (var_base, per target), and the degrees of freedom of the tests."""

    mu: np.ndarray
    target: np.ndarray
    var_cell: np.ndarray
    var_base: np.ndarray
    df: float

    @property
    def rho(self) -> np.ndarray:
        return 1 + self.mu

    def se(self) -> np.ndarray:
        """Each cell's standard error."""
        return self.rho * np.sqrt(self.var_cell + self.var_base[self.target])

    def se_mean(self) -> float:
        """The standard error of the cells' unweighted mean (the shared baselines' covariance in it)."""
        n = len(self.mu)
        own = float(np.sum(self.rho**2 * self.var_cell))
        loads = np.bincount(self.target, weights=self.rho, minlength=len(self.var_base))
        shared = float(np.sum(loads**2 * self.var_base))
        return math.sqrt(own + shared) / n

    def draws(self, n: int = DRAWS, seed: int = SEED) -> np.ndarray:
        """n simulated estimates of the cells (n × cells)."""
        rng = np.random.default_rng(seed)
        e_cell = rng.standard_normal((n, len(self.mu))) * np.sqrt(self.var_cell)
        e_base = rng.standard_normal((n, len(self.var_base))) * np.sqrt(self.var_base)
        return self.mu + self.rho * (e_cell - e_base[:, self.target])


def p_shown_inside(x: np.ndarray, se, df: float, band: Band) -> np.ndarray:
    """The p-value of "outside the range" (the larger of the one-sided tests at each finite
    edge), elementwise: small where x is shown inside."""
    ps = []
    if math.isfinite(band.low):
        ps.append(stats.t.sf((x - band.low) / se, df))
    if math.isfinite(band.high):
        ps.append(stats.t.sf((band.high - x) / se, df))
    return np.maximum.reduce(ps) if ps else np.zeros_like(x)


def p_reproduced(cells: Cells, band: Band, quantifier: str, n: int = DRAWS, seed: int = SEED) -> float:
    """The share of n simulated measurements whose verdict is "reproduced"."""
    x = cells.draws(n, seed)
    if quantifier in (MEAN, ABOUT):
        p = p_shown_inside(x.mean(axis=1), cells.se_mean(), cells.df, band)
        return float(np.mean(p <= ALPHA))
    k = x.shape[1]
    q = required_cells(quantifier, k)
    p = p_shown_inside(x, cells.se(), cells.df, band)
    return float(np.mean((p <= ALPHA / (k - q + 1)).sum(axis=1) >= q))
