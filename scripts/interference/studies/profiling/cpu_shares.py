"""The CPU-share model (issue 55, item 1): the CPU part of a member's IR from the share of the CPU
the scheduler gives it beside its partners, and its speed at that share (cpu_speed.tsv).

Shares, on a host of N cores, from the scheduler's rules (Linux CFS, cgroup v1 or v2):
  1. containers (cgroups) have equal weight (Docker's default cpu.shares / cpu.weight): the cores
     are water-filled between them, each an equal part but never more than it wants (the sum of
     its members' demands), what one leaves going to the others;
  2. inside one container every thread has equal weight: its part is water-filled between its
     members in proportion to their threads, again none above its demand.
A member's demand is its CPU use alone and unlimited (Case 1u: cpu_speed.tsv's cpu_cores), its
threads that demand rounded (L and S start one per core; the others one).

A member whose share meets its demand runs as alone and unlimited (speed 1). One held below it:
its speed at its share c is the quota sweep's curve (speed against Case 1u at a quota of c cores,
every core allowed, so the member keeps the threads it has in an unlimited pair), linear between
the measured quotas, through (0, 0) and (N, 1) (1u is the quota of every core), made monotone
non-decreasing (more CPU never slows it: a dip is noise), held beyond the largest. The model
cpu-busy reads the busy sweep's points instead (case 1k: unlimited beside k containers each
spinning a core, at the share the scheduler's rules give it there): a quota throttles a
barrier-synchronised program's threads together, busy neighbours slice them apart
(docs/placement.md).

The CPU part of its IR against Case 1: ratio = speed(c) / speed(Case 1); IR = ratio − 1 where
higher is better, 1 − 1/ratio where lower is (stats.resampling.relative_change's orientation).
Case 3b limits each container as Case 1 (cores of its own): its CPU part is 0 by construction.

Its 95 % interval draws each speed from a normal whose 95 % interval is its CI (profiles.py's
rule; seeded by the microservice, metric and point) and takes the quantiles: it covers the
profile's own noise (iterations, with one run a key), not the model's error, which the
validation against a replicate measures. What the model leaves out: every resource but CPU time
(memory bandwidth, caches, disk, network: item 2's pinned bubbles), a network microservice's
server container (unlimited, outside the placement) and the cost of sharing a core between the
threads of a barrier-synchronised program beyond what a quota costs it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from interference.core.groups import read_partner_label
from interference.stats.descriptive import CONFIDENCE, as_bool
from interference.studies.profiling.profiles import monotone_nonincreasing, normal_draws

SEED = 20240601
N_DRAWS = 2000
# Case -> (the target shares its container with its partners, the containers are limited).
CASE_LAYOUT = {"2": (True, False), "3a": (False, False), "3b": (False, True), "2-3a": (False, False)}
# A member given at least this part of its demand runs as if alone and unlimited: the curve's
# quotas hold it to a share, a satisfied member is held to nothing (NR wants 0.14 of a core).
SATISFIED = 0.98
PREDICTION_COLUMNS = ["case", "target", "partner", "metric", "ir", "ir_low", "ir_high", "share", "reason"]


def water_fill(capacity: float, demands, weights) -> np.ndarray:
    """Max-min fair shares of `capacity` with weights: each gets weight × a common level, never
    more than its demand; what the satisfied leave is shared again by the others."""
    demand, weight = np.asarray(demands, float), np.asarray(weights, float)
    share = np.zeros_like(demand)
    left, open_ = float(capacity), demand > 0
    while open_.any() and left > 1e-12:
        give = np.minimum(demand - share, weight * left / weight[open_].sum()) * open_
        share += give
        left -= give.sum()
        open_ &= share < demand - 1e-12
    return share


def busy_share(demand: float, busy: int, cores: float) -> float:
    """A member's share beside `busy` containers each wanting one core (the busy sweep): water-filled
    with equal container weights, its want its demand alone and unlimited (every core if unknown)."""
    want = min(demand, cores) if np.isfinite(demand) and demand > 0 else float(cores)
    return float(water_fill(cores, [want, *[1.0] * busy], np.ones(busy + 1))[0])


def shares(containers: list[list[str]], demand: dict, threads: dict, cores: float) -> list[list[float]]:
    """Each member's CPU share (cores), members in the containers' order: water-filled between
    the containers by their wants, then inside each by threads."""
    wants = [min(sum(demand[m] for m in c), cores) for c in containers]
    per_container = water_fill(cores, wants, np.ones(len(containers)))
    return [
        list(water_fill(part, [demand[m] for m in c], [threads[m] for m in c]))
        for part, c in zip(per_container, containers)
    ]


@dataclass(frozen=True)
class SpeedCurve:
    """One microservice's speed against Case 1u at `cores` (the quotas, then every core), its
    Case 1 speed, and each point's draws (rows: draws)."""

    cores: np.ndarray
    speed: np.ndarray
    speed_draws: np.ndarray
    case1: float
    case1_draws: np.ndarray
    demand: float
    threads: int

    @cached_property
    def _fitted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The curve through (0, 0), made monotone once: its cores, point curve and drawn curves."""
        x = np.concatenate([[0.0], self.cores])
        point = monotone_nondecreasing(np.concatenate([[0.0], self.speed])[None, :])[0]
        drawn = monotone_nondecreasing(
            np.concatenate([np.zeros((len(self.speed_draws), 1)), self.speed_draws], axis=1)
        )
        return x, point, drawn

    def at(self, c: float) -> tuple[float, np.ndarray]:
        """The speed at a share of c cores, and its draws (monotone curve through (0, 0))."""
        x, point, drawn = self._fitted
        return float(np.interp(c, x, point)), _interp_rows(c, x, drawn)


def monotone_nondecreasing(values: np.ndarray) -> np.ndarray:
    """The least-squares non-decreasing fit along the last axis (equal weights)."""
    return -monotone_nonincreasing(-np.asarray(values, float), np.ones(values.shape[-1]))


def _interp_rows(c: float, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """np.interp of each row at c (x increasing, held beyond both ends)."""
    if c >= x[-1]:
        return rows[:, -1]
    j = int(np.searchsorted(x, c, side="right"))
    t = (c - x[j - 1]) / (x[j] - x[j - 1])
    return (1 - t) * rows[:, j - 1] + t * rows[:, j]


def curves(
    cpu_speed: pd.DataFrame, n_draws: int = N_DRAWS, sweep: str = "1q"
) -> dict[tuple[str, str], SpeedCurve]:
    """(microservice, metric) -> its SpeedCurve, from cpu_speed.tsv's rows of one host and runtime:
    the quota sweep's points (sweep "1q") or the busy sweep's (sweep "1k": the speed at the share
    it got among spinning neighbours), each with Case 1u at every core. Points at the same share
    (a member that wants less than any neighbour leaves it) are averaged."""
    out = {}
    for (ms, metric), g in cpu_speed.groupby(["microservice", "metric"], sort=True):
        swept = g[g["case"].isin([sweep, "1u"])].sort_values("cores")
        swept = swept.groupby("cores", as_index=False, sort=True).agg(
            speed=("speed", "mean"), ci_low=("ci_low", "mean"), ci_high=("ci_high", "mean")
        )
        case1 = g[g["case"] == "1"]
        base = g[g["case"] == "1u"]
        if case1.empty or base.empty or len(swept) < 2:  # the sweep's points and 1u
            continue
        draws = np.column_stack(
            [
                normal_draws(r.speed, r.ci_low, r.ci_high, SEED, (ms, metric, sweep, r.cores), n_draws)
                for r in swept.itertuples()
            ]
        )
        c1 = case1.iloc[0]
        out[(ms, metric)] = SpeedCurve(
            cores=swept["cores"].to_numpy(float),
            speed=swept["speed"].to_numpy(float),
            speed_draws=draws,
            case1=float(c1.speed),
            case1_draws=normal_draws(c1.speed, c1.ci_low, c1.ci_high, SEED, (ms, metric, "1"), n_draws),
            demand=float(base.iloc[0].cpu_cores),
            threads=int(base.iloc[0].threads),
        )
    return out


def ir_of(ratio, higher_is_better: bool):
    """The IR of a speed ratio against the baseline, in relative_change's orientation."""
    ratio = np.asarray(ratio, float)
    return ratio - 1 if higher_is_better else 1 - 1 / ratio


def predict_unit(
    curves_: dict, case: str, target: str, partner: str, metric: str, cores: float, higher_is_better: bool
) -> dict:
    """The row (PREDICTION_COLUMNS) of one measured unit from the members' curves."""
    return predict_unit_with_draws(curves_, case, target, partner, metric, cores, higher_is_better)[0]


def predict_unit_with_draws(
    curves_: dict, case: str, target: str, partner: str, metric: str, cores: float, higher_is_better: bool
) -> tuple[dict, np.ndarray | None]:
    """predict_unit's row and the IR's draws behind its interval (zeros in Case 3b, None where a
    profile is missing)."""
    row = {"case": case, "target": target, "partner": partner, "metric": metric}
    if CASE_LAYOUT[case][1]:  # limited
        return row | {"ir": 0.0, "ir_low": 0.0, "ir_high": 0.0, "share": np.nan,
                      "reason": "Case 3b: cores of its own, as in Case 1 (no CPU part)"}, np.zeros(N_DRAWS)  # fmt: skip
    containers = containers_of(case, target, partner)
    missing = [m for m in sorted({m for c in containers for m in c}) if not any(k[0] == m for k in curves_)]
    if (target, metric) not in curves_ or missing:
        absent = missing or [f"{target} ({metric})"]
        return row | {"ir": np.nan, "ir_low": np.nan, "ir_high": np.nan, "share": np.nan,
                      "reason": f"no CPU profile of {', '.join(absent)}"}, None  # fmt: skip
    share, point, draws = member_irs(curves_, containers, cores, {0: (metric, higher_is_better)})[0]
    low, high = np.nanquantile(draws, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return row | {
        "ir": point,
        "ir_low": float(low),
        "ir_high": float(high),
        "share": share,
        "reason": "",
    }, draws


def containers_of(case: str, target: str, partner: str) -> list[list[str]]:
    """The unit's containers, the target first in the first (Cases 2, 3a, 2-3a)."""
    mine, apart = read_partner_label(partner, CASE_LAYOUT[case][0])
    if case == "2-3a" and "|" not in partner:  # the member apart: the two others share a container
        return [[target], list(apart)]
    return [[target, *mine], *([m] for m in apart)]


def member_irs(
    curves_: dict, containers: list[list[str]], cores: float, wanted: dict[int, tuple[str, bool]]
) -> dict[int, tuple[float, float, np.ndarray]]:
    """For each member instance i in `wanted` (its index in the containers read in order, with its
    metric and whether higher is better): its share, its IR and the IR's draws, the containers
    sharing `cores` cores."""
    names = [m for c in containers for m in c]
    # Any metric's curve of a member: its demand and threads are its runs', the same for each.
    of = {m: next(v for k, v in curves_.items() if k[0] == m) for m in set(names)}
    layout, i = [], 0
    for c in containers:  # members as instances: a self-pair's two copies are two
        layout.append(list(range(i, i + len(c))))
        i += len(c)
    demand = {i: of[n].demand for i, n in enumerate(names)}
    threads = {i: of[n].threads for i, n in enumerate(names)}
    share_of = [s for part in shares(layout, demand, threads, cores) for s in part]
    out = {}
    for i, (metric, higher) in wanted.items():
        curve, share = curves_[(names[i], metric)], share_of[i]
        if share >= SATISFIED * curve.demand:  # all it wants: as alone and unlimited (1u, speed 1)
            speed, drawn = 1.0, np.ones(len(curve.case1_draws))
        else:  # held to its share, as a quota of that many cores holds it
            speed, drawn = curve.at(share)
        out[i] = (share, float(ir_of(speed / curve.case1, higher)), ir_of(drawn / curve.case1_draws, higher))
    return out


def unit_keys(units: pd.DataFrame) -> pd.DataFrame:
    """The distinct (case, target, partner, metric) of interference.tsv's concurrent rows, with
    higher_is_better read as a bool."""
    keys = units[["case", "target", "partner", "metric", "higher_is_better"]].drop_duplicates(
        ["case", "target", "partner", "metric"]
    )
    return keys.assign(
        case=keys["case"].astype(str), partner=keys["partner"].astype(str),
        higher_is_better=as_bool(keys["higher_is_better"]),
    )  # fmt: skip


def predict_units(curves_: dict, units: pd.DataFrame, cores: float) -> pd.DataFrame:
    """Every (case, target, partner, metric) row of `units` (interference.tsv's concurrent rows:
    they carry higher_is_better) predicted from the curves."""
    rows = [
        predict_unit(curves_, k.case, k.target, k.partner, k.metric, cores, k.higher_is_better)
        for k in unit_keys(units).itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)
