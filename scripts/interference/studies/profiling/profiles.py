"""The profiling study's tables as the predictor reads them, and the Monte Carlo draws of each
input (predict.py's docstring has the model and what the interval covers).

  sensitivity.tsv   microservice placement resource intensity metric degradation ci_low ci_high runs
  pressure.tsv      microservice placement resource pressure ci_low ci_high
  limit_effect.tsv  microservice metric effect ci_low ci_high

A sensitivity curve is made monotone non-increasing (more bubble never helps: a rise is noise),
its adjacent means pooled by their runs, and starts at (0, 0) when intensity 0 was not measured
(no bubble is the microservice alone, the degradation's own baseline). Every input is drawn from
a normal whose 95 % interval is its CI (none: exact), by a generator seeded with the seed and the
input's key, so the same input is the same draw wherever it is used."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from interference.stats.descriptive import CONFIDENCE
from interference.stats.resampling import rng_for
from interference.studies.profiling.plan import RESOURCES

SEED = 20240601
N_DRAWS = 2000
Z = stats.norm.ppf(0.5 + CONFIDENCE / 2)
# Each table: the columns that name one input, then its values.
KEYS = {
    "sensitivity": ["microservice", "placement", "resource", "metric", "intensity"],
    "pressure": ["microservice", "placement", "resource"],
    "limit_effect": ["microservice", "metric"],
}
VALUES = {
    "sensitivity": ["degradation", "ci_low", "ci_high", "runs"],
    "pressure": ["pressure", "ci_low", "ci_high"],
    "limit_effect": ["effect", "ci_low", "ci_high"],
}


def normal_draws(point: float, low: float, high: float, seed: int, key: tuple, n: int) -> np.ndarray:
    """n draws of an input from a normal whose 95 % interval is its CI (none: exact), seeded by
    the seed and the input's key."""
    sd = (high - low) / (2 * Z) if np.isfinite(low) and np.isfinite(high) else 0.0
    return point + sd * rng_for(seed, key).standard_normal(n)


def monotone_nonincreasing(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-increasing fit along the last axis (isotonic regression, by the
    min-max formula f_i = min over a <= i of max over b >= i of the weighted mean of a..b; exact,
    and vectorised over draws since a curve has only a handful of points)."""
    values = np.asarray(values, float)
    w = np.broadcast_to(np.asarray(weights, float), values.shape)
    cw = np.concatenate([np.zeros(w.shape[:-1] + (1,)), np.cumsum(w, -1)], -1)
    cwy = np.concatenate([np.zeros(w.shape[:-1] + (1,)), np.cumsum(w * values, -1)], -1)
    k = values.shape[-1]
    fit = np.empty_like(values)
    for i in range(k):
        best = None
        for a in range(i + 1):
            # The mean of a..b for every b >= i; the largest of them, then the smallest over a.
            means = [(cwy[..., b + 1] - cwy[..., a]) / (cw[..., b + 1] - cw[..., a]) for b in range(i, k)]
            worst = np.max(means, axis=0)
            best = worst if best is None else np.minimum(best, worst)
        fit[..., i] = best
    return fit


@dataclass
class Profiles:
    """The three profile tables and the draws made from them (cached per input)."""

    sensitivity: pd.DataFrame
    pressure: pd.DataFrame
    limit_effect: pd.DataFrame
    seed: int = SEED
    n_draws: int = N_DRAWS
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for name, keys in KEYS.items():
            table, columns = getattr(self, name), keys + VALUES[name]
            missing = [c for c in columns if c not in table]
            if missing and not table.empty:
                raise ValueError(f"{name}.tsv lacks the columns {', '.join(missing)}")
            table = table.reindex(columns=list(table.columns) + missing)
            # Names stay names ("2", "3a" are placements, not numbers), however the table was built.
            table = table.astype({k: str for k in keys if k != "intensity"})
            if table.duplicated(keys).any():
                raise ValueError(f"{name}.tsv has more than one row for one of its {'/'.join(keys)}")
            setattr(self, name, table)

    @classmethod
    def read(cls, sensitivity, pressure, limit_effect, **options) -> Profiles:
        text = {"microservice": str, "placement": str, "resource": str, "metric": str}
        tables = [pd.read_csv(p, sep="\t", dtype=text) for p in (sensitivity, pressure, limit_effect)]
        return cls(*tables, **options)

    def _draws(self, point: float, low: float, high: float, key: tuple) -> np.ndarray:
        return normal_draws(point, low, high, self.seed, key, self.n_draws)

    def curve(self, ms: str, placement: str, resource: str, metric: str):
        """(intensities, point curve, drawn curves) with the (0, 0) anchor, monotone; or None."""
        key = ("sensitivity", ms, placement, resource, metric)
        if key not in self._cache:
            s = self.sensitivity
            rows = s[(s.microservice == ms) & (s.placement == placement) & (s.resource == resource)]
            rows = rows[rows.metric == metric].sort_values("intensity")
            self._cache[key] = None if rows.empty else self._monotone_curve(rows, key)
        return self._cache[key]

    def _monotone_curve(self, rows: pd.DataFrame, key: tuple):
        x = rows.intensity.to_numpy(float)
        point = rows.degradation.to_numpy(float)
        drawn = np.stack(
            [self._draws(r.degradation, r.ci_low, r.ci_high, (*key, r.intensity)) for r in rows.itertuples()],
            -1,
        )
        # Adjacent means pooled by their runs, as samples are pooled.
        weights = rows.runs.astype(float).fillna(1).clip(lower=1).to_numpy()
        point, drawn = monotone_nonincreasing(point, weights), monotone_nonincreasing(drawn, weights)
        if x[0] > 0:  # no bubble is the target alone: exactly 0, so the fit may not rise above it
            x = np.concatenate([[0.0], x])
            point = np.concatenate([[0.0], np.minimum(point, 0)])
            drawn = np.concatenate([np.zeros((self.n_draws, 1)), np.minimum(drawn, 0)], -1)
        return x, point, drawn

    def has_placement(self, placement: str) -> bool:
        """Whether the profiles measured the placement at all (sensitivity and pressure)."""
        return all(len(t) and (t["placement"] == placement).any() for t in (self.sensitivity, self.pressure))

    def profiled_resources(self) -> set[str]:
        """The resources the profiling study measured at all (a config may profile fewer than
        four: a resource no microservice was profiled on is left out of every prediction). With no
        pressure at all nothing is known to be left out: every resource, each then missing."""
        return set(self.pressure["resource"]) if len(self.pressure) else set(RESOURCES)

    def pressure_of(self, ms: str, placement: str, resource: str):
        """(point, draws) of a microservice's pressure, draws held at >= 0; or None."""
        key = ("pressure", ms, placement, resource)
        if key not in self._cache:
            p = self.pressure
            rows = p[(p.microservice == ms) & (p.placement == placement) & (p.resource == resource)]
            r = None if rows.empty or not np.isfinite(float(rows.iloc[0].pressure)) else rows.iloc[0]
            self._cache[key] = (
                None
                if r is None
                else (float(r.pressure), np.maximum(self._draws(r.pressure, r.ci_low, r.ci_high, key), 0))
            )
        return self._cache[key]

    def pressure_note(self, ms: str, placement: str, resource: str) -> str:
        """Why pressure.tsv gives no pressure of a microservice ("" when it has no row at all)."""
        p = self.pressure
        rows = p[(p.microservice == ms) & (p.placement == placement) & (p.resource == resource)]
        note = rows.iloc[0].get("note", "") if len(rows) else ""
        return note if isinstance(note, str) else ""

    def limit_of(self, ms: str, metric: str):
        key = ("limit", ms, metric)
        if key not in self._cache:
            e = self.limit_effect
            rows = e[(e.microservice == ms) & (e.metric == metric)]
            r = None if rows.empty else rows.iloc[0]
            self._cache[key] = (
                None if r is None else (float(r.effect), self._draws(r.effect, r.ci_low, r.ci_high, key))
            )
        return self._cache[key]

    def metrics_of(self, ms: str) -> list[str]:
        return sorted(set(self.sensitivity.metric[self.sensitivity.microservice == ms]))
