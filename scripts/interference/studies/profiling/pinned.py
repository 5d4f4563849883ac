"""The CPU-share model with the rest added from pinned bubbles (issue 55, item 2).

The CPU-share model (cpu_shares.py) sees CPU time only. What two members share besides it —
memory bandwidth, caches, the disk, the network stack — the profiling study measures with
bubbles in placement 3b: the bubble in a container limited to the other core, so that it presses
on its resource without taking the member's CPU (plan.py; no cpu bubble there). A partner's
pressure on each resource is measured the same way (the probe on the other core beside it).

For a member beside its partners, whatever the case:
  1. the CPU part: cpu_shares.member_irs (0 in Case 3b);
  2. the rest: predict.predict_member with every partner apart and limited — the partners'
     placement-3b pressures summed per resource, the member's placement-3b curve at that sum,
     the dominant resource's term (predict.py's rule, chosen before this model was scored);
  3. 1 + IR = (1 + CPU part)(1 + rest): each factor's loss scales what the other left
     (predict.combine; exact in speed ratios, first order for lower-is-better metrics).
In Case 3b the model is the bubble model of placement 3b, as predict.py computes it.

The rest is measured on separate cores: in Cases 2 and 3a the member shares cores too, and the
model assumes the resource's contention is the same whatever the CPU shares (not measured). Its
interval draws both parts' inputs (independent: different runs) and takes the quantiles, at the
level of the profiles' own runs; the model's error is the validation's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.core.groups import read_partner_label
from interference.stats.descriptive import CONFIDENCE
from interference.studies.profiling import cpu_shares
from interference.studies.profiling.predict import combine, predict_member
from interference.studies.profiling.profiles import Profiles

PLACEMENT = "3b"
PREDICTION_COLUMNS = [*cpu_shares.PREDICTION_COLUMNS, "ir_cpu", "ir_rest"]


def partners_of(case: str, partner: str) -> list[str]:
    """Every other member of the unit, in or out of its container."""
    mine, apart = read_partner_label(partner, cpu_shares.CASE_LAYOUT[case][0])
    return [*mine, *apart]


def rest_of(profiles: Profiles):
    """rest(target, metric, partners): a member's rest beside its partners (every partner apart and
    limited: placement 3b's pressures and curve), as predict.predict_member computes it; None
    where the profiles have no placement 3b."""
    if not profiles.has_placement(PLACEMENT):
        return None
    return lambda target, metric, partners: predict_member(
        profiles, target, metric, apart=partners, limited=True
    )


def predict_unit(
    curves: dict,
    rest,
    case: str,
    target: str,
    partner: str,
    metric: str,
    cores: float,
    higher_is_better: bool,
) -> dict:
    """The row (PREDICTION_COLUMNS) of one measured unit: the CPU part times the pinned rest
    (`rest`: rest_of's)."""
    cpu, cpu_draws = cpu_shares.predict_unit_with_draws(
        curves, case, target, partner, metric, cores, higher_is_better
    )
    r = rest(target, metric, partners_of(case, partner))
    row = cpu | {"ir_cpu": cpu["ir"], "ir_rest": r.ir}
    reasons = "; ".join(x for x in (cpu["reason"], r.reason) if x)
    if cpu_draws is None or not np.isfinite(r.ir):
        return row | {"ir": np.nan, "ir_low": np.nan, "ir_high": np.nan, "reason": reasons}
    ir, draws = combined(cpu["ir"], cpu_draws, r)
    low, high = np.nanquantile(draws, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return row | {"ir": ir, "ir_low": float(low), "ir_high": float(high), "reason": reasons}


def combined(cpu_ir: float, cpu_draws: np.ndarray, rest) -> tuple[float, np.ndarray]:
    """1 + IR = (1 + CPU part)(1 + rest), at the point and per draw (predict.combine)."""
    n = min(len(cpu_draws), len(rest.draws))
    return float(combine([cpu_ir, rest.ir])), combine([cpu_draws[:n], rest.draws[:n]])


def predict_units(curves: dict, profiles: Profiles, units: pd.DataFrame, cores: float) -> pd.DataFrame:
    """Every (case, target, partner, metric) row of `units` (interference.tsv's concurrent rows)."""
    keys = cpu_shares.unit_keys(units)
    rest = rest_of(profiles)
    if rest is None:
        rows = keys.drop(columns="higher_is_better").assign(
            ir=np.nan,
            ir_low=np.nan,
            ir_high=np.nan,
            reason="no pinned bubbles: the profiles have no placement 3b",
        )
        return rows.reindex(columns=PREDICTION_COLUMNS)
    rows = [
        predict_unit(curves, rest, k.case, k.target, k.partner, k.metric, cores, k.higher_is_better)
        for k in keys.itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)


def with_rest(irs: list, members, metrics: dict, rest) -> tuple[list, str]:
    """The members' (name, IR, draws) of the CPU part, each combined with its rest beside the
    placement's other members (advise.cpu_total's order: one entry per member instance), and
    what was missing (empty when nothing was)."""
    out, missing = [], []
    for name, ir, draws in irs:
        others = list(members)
        others.remove(name)
        r = rest(name, metrics[name], others)
        if not np.isfinite(r.ir):
            missing.append(r.reason or f"no pinned profile of {name}")
            continue
        out.append((name, *combined(ir, draws, r)))
    return out, "; ".join(dict.fromkeys(missing))
