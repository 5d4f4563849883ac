"""The predicted IR of a microservice beside partners it was never measured with, from solo
profiles only (the idea of Bubble-Up, Mars et al., MICRO 2011: a sensitivity curve per
microservice and its pressure expressed as a bubble size predict a pair from two solo runs).

Inputs: the profiling study's sensitivity.tsv, pressure.tsv and limit_effect.tsv (profiles.py
reads them and draws their inputs). No pair measurement enters the model: interference.tsv is read by validate.py only.

The model, for one member (the target) of a group of containers:
  1. every partner presses on each resource with its pressure in the placement it has towards the
     target ("2": same container, "3a": another container); pressures on one resource add;
  2. the target's sensitivity curve for that resource gives d_r at the summed pressure: piecewise
     linear in intensity through (0, 0) (no bubble = the target alone), made monotone
     non-increasing, held at its last measured value beyond the largest intensity;
  3. 1 + IR = (1 + limit effect) · (1 + d), d the resource term of the combination rule:
     "dominant" (the model since 2026-11-26, chosen before it was scored): the d_r of largest size,
     one resource's; "product" (the first model): Π_r (1 + d_r) - 1. The first failed on the
     measured pairs (docs/placement.md): on two cores a microservice slows the probe on every
     resource through the CPU it takes, so the product counted one cause once per resource.
     The limit effect (Case 1u against Case 1) only when the containers are unlimited, since
     the IR is against the limited Case 1; the cpu term only when cores are shared (limited
     containers get disjoint cores). So Case 3b has neither.
The curve and pressures of placement "2" are used when the target shares its container, else
those of "3a" — or, for the limited Case 3b, those of placement "3b" where the profiles have it
(each container limited to its own cores, as in the pair: a partner's pressure there is what it
does without the other core; chosen on 2026-11-27 before any pair was predicted with it).

The interval is a Monte Carlo 95 % interval: every input (each point of a curve, each pressure,
each limit effect) is drawn from a normal whose 95 % interval is the input's CI, the model is
evaluated per draw and the 2.5/97.5 % quantiles are taken. It is at the level of the inputs' CIs:
between runs when the profiling statistics give runs-level CIs (as interference.tsv does), never
narrower. It does not include the model's own error: validate.py measures that. An input without
a CI is taken as exact. Each input's draws come from a generator seeded by the seed and the
input's key, so a prediction is reproducible and an input shared by several predictions (a
partner's pressure) is the same draw in each (the total of advise.py is then correctly
correlated)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from interference.core.groups import labels, read_partner_label
from interference.stats.descriptive import CONFIDENCE
from interference.studies.profiling.plan import RESOURCES
from interference.studies.profiling.profiles import Profiles

CASES = ("2", "3a", "3b")
# Case -> (the target shares its container with its partners, the containers are limited); in
# Case 2-3a (a triple: two share a container, one apart) the partner label says who shares.
CASE_LAYOUT = {"2": (True, False), "3a": (False, False), "3b": (False, True), "2-3a": (False, False)}
PREDICTION_COLUMNS = ["case", "target", "partner", "metric", "ir", "ir_low", "ir_high", "reason"]


def interpolate(intensity: np.ndarray, degradation: np.ndarray, at) -> np.ndarray:
    """Piecewise linear in intensity (increasing), clipped to the measured range; `degradation`
    may carry draws on its leading axis, `at` one value per draw."""
    xp, fp = np.asarray(intensity, float), np.atleast_2d(degradation)
    x = np.broadcast_to(np.asarray(at, float), fp.shape[:1])
    if len(xp) == 1:
        return fp[:, 0].copy()
    x = np.clip(x, xp[0], xp[-1])
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    t = (x - xp[j]) / (xp[j + 1] - xp[j])
    rows = np.arange(fp.shape[0])
    return fp[rows, j] * (1 - t) + fp[rows, j + 1] * t


RULES = ("dominant", "product")
RULE = "dominant"


def combine(degradations) -> np.ndarray:
    """1 + IR = Π (1 + d). Multiplicative because each factor's loss scales what the others left
    (running at 80 % of memory bandwidth for half the CPU time gives 40 %, not 30 %), which keeps
    IR > -1 where a sum could pass it, equals the sum to first order, and is exact for the limit
    effect: mean_2/mean_1 = (mean_1u/mean_1)·(mean_2/mean_1u) (split.tsv's decomposition). For
    lower-is-better metrics, whose IR is 1 - mean/baseline, it holds to first order only."""
    product = 1.0
    for d in degradations:
        product = product * (1 + np.asarray(d, float))
    return np.asarray(product - 1)


def resource_term(points: list, draws: list, rule: str) -> tuple[float, np.ndarray]:
    """d of 1 + IR = (1 + limit effect) · (1 + d) by the combination rule (the module's doc), at the
    inputs' central values and per draw. "dominant": the resource whose central term is of
    largest size, with that resource's draws (a maximum taken per draw would sit beyond the
    central one wherever terms are alike, putting the point at the interval's edge)."""
    if rule not in RULES:
        raise ValueError(f"unknown combination rule {rule!r}; known: {', '.join(RULES)}")
    if not points:
        return 0.0, np.asarray(0.0)
    if rule == "product":
        return float(combine(points)), combine(draws)
    k = int(np.argmax(np.abs(points)))
    return float(points[k]), np.asarray(draws[k], float)


@dataclass
class Prediction:
    ir: float
    low: float
    high: float
    draws: np.ndarray
    reason: str = ""


def predict_member(
    profiles: Profiles,
    target: str,
    metric: str,
    together=(),
    apart=(),
    limited: bool = False,
    rule: str = RULE,
) -> Prediction:
    """The target's IR against its Case 1 with `together` in its container and `apart` in other
    containers (all limited or all unlimited)."""
    # Apart and limited (Case 3b): the profiles of placement 3b where measured (the partner's
    # pressure with the partner limited to its own cores), else those of 3a.
    apart_at = "3b" if limited and profiles.has_placement("3b") else "3a"
    placement = "2" if together else apart_at
    shared = [(p, "2") for p in together] + [(p, apart_at) for p in apart]
    point_factors, drawn_factors, missing = [], [], []  # the resources' terms
    limit_point, limit_drawn = 0.0, np.zeros(profiles.n_draws)
    if not limited:
        limit = profiles.limit_of(target, metric)
        if limit is None:
            missing.append(f"no limit effect of {target} ({metric})")
        else:
            limit_point, limit_drawn = limit
    profiled = profiles.profiled_resources()
    for resource in RESOURCES:
        if resource not in profiled:
            continue  # not profiled for anyone: the prediction says so (its reason) and leaves it out
        # Limited containers have disjoint cores: only a partner in the same container shares CPU.
        pressing = [(p, pl) for p, pl in shared if resource != "cpu" or not limited or pl == "2"]
        if not pressing:
            continue
        pressures = [profiles.pressure_of(p, pl, resource) for p, pl in pressing]
        missing += [
            f"no {resource} pressure of {p} in placement {pl}"
            + (f" ({note})" if (note := profiles.pressure_note(p, pl, resource)) else "")
            for (p, pl), q in zip(pressing, pressures)
            if q is None
        ]
        if None in pressures:
            continue
        total_point, total_drawn = sum(q[0] for q in pressures), sum(q[1] for q in pressures)
        if total_point == 0 and not np.any(total_drawn):
            continue  # nothing presses: the target's curve is not needed
        curve = profiles.curve(target, placement, resource, metric)
        if curve is None:
            missing.append(f"no {resource} sensitivity of {target} ({metric}) in placement {placement}")
            continue
        x, point, drawn = curve
        point_factors.append(interpolate(x, point, total_point)[0])
        drawn_factors.append(interpolate(x, drawn, total_drawn))
    if missing:
        return Prediction(np.nan, np.nan, np.nan, np.full(profiles.n_draws, np.nan), "; ".join(missing))
    term_point, term_draws = resource_term(point_factors, drawn_factors, rule)
    point = combine([limit_point, term_point])
    draws = combine([limit_drawn, term_draws]) + np.zeros(profiles.n_draws)
    low, high = np.quantile(draws, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    left_out = [r for r in RESOURCES if r not in profiled]
    note = f"not profiled, left out: {', '.join(left_out)}" if left_out else ""
    return Prediction(float(point), float(low), float(high), draws, note)


def partner_of(members, target: str, case: str) -> str:
    """The others of a pair or triple in Case 2, 3a or 3b, as interference.tsv names the partner."""
    if case not in CASES:
        raise ValueError(
            f"Case {case}: its partner label says who shares the container (predict_unit takes it)"
        )
    containers = [list(members)] if CASE_LAYOUT[case][0] else [[m] for m in members]
    return labels(containers)[list(members).index(target)]


def predict_unit(
    profiles: Profiles, case: str, target: str, partner: str, metric: str, rule: str = RULE
) -> dict:
    """The row (PREDICTION_COLUMNS) of one measured unit: its target beside the partner its label
    names (core/groups.py), in the case's containers."""
    shares, limited = CASE_LAYOUT[case]
    together, apart = read_partner_label(partner, shares)
    p = predict_member(profiles, target, metric, together, apart, limited, rule)
    row = {"case": case, "target": target, "partner": partner, "metric": metric}
    return row | {"ir": p.ir, "ir_low": p.low, "ir_high": p.high, "reason": p.reason}


def predict_units(profiles: Profiles, units: pd.DataFrame, rule: str = RULE) -> pd.DataFrame:
    """Every (case, target, partner, metric) row of `units` (measured ones: pairs, triples, Case
    2-3a) predicted from the profiles; a target or metric not profiled is left out."""
    keys = units[["case", "target", "partner", "metric"]].astype(str).drop_duplicates()
    rows = [
        predict_unit(profiles, *key, rule=rule)
        for key in keys.itertuples(index=False)
        if key.metric in profiles.metrics_of(key.target)
    ]
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)


def predict_group(
    profiles: Profiles, case: str, members, metrics: dict | None = None, rule: str = RULE
) -> list[dict]:
    """Rows (PREDICTION_COLUMNS) for each distinct member of a pair or triple in case 2, 3a or 3b;
    every metric of its sensitivity curves, or metrics[target] only."""
    rows = []
    for target in dict.fromkeys(members):  # a self-pair's two copies are pooled, as measured
        partner = partner_of(members, target, case)
        for metric in [metrics[target]] if metrics else profiles.metrics_of(target):
            rows.append(predict_unit(profiles, case, target, partner, metric, rule))
    return rows


def predict_all(
    profiles: Profiles, microservices=None, size: int = 2, cases=CASES, rule: str = RULE
) -> pd.DataFrame:
    """Every pair (size 2, self-pairs included) or triple of the profiled microservices."""
    names = microservices or sorted(set(profiles.sensitivity.microservice))
    groups = itertools.combinations_with_replacement(names, size)
    rows = [
        row for group in groups for case in cases for row in predict_group(profiles, case, group, rule=rule)
    ]
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)
