"""A small correction of the CPU-share model learnt from measured pairs (issue 55, item 3), scored
honestly: fitted on one session's pairs, applied to another's, each microservice's own pairs held
out when it is the one predicted.

What the model misses is a matter of layout more than of names: a one-thread member beside a
two-thread one in another unlimited container loses CPU that equal container shares do not
take from it (Linux splits a group's weight over the CPUs it runs on), and a memory-bound
member beside a busy one loses bandwidth no CPU share shows. So a unit's class is its layout:
(case, whether it shares its container, its threads, its partners' threads). The correction of
a unit is the mean residual (measured IR − the model's) of the training session's units of its
class whose members do not include its target (leave one microservice out: a prediction for a
microservice never learns from that microservice's own pairs); none: 0, and the row says so.
A unit's residual is the mean over its metrics (they come from the same runs). The interval is
the model's shifted by the correction; the correction's own error is not in it (the validation
against the second session measures it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.core.groups import read_partner_label
from interference.studies.profiling.cpu_shares import CASE_LAYOUT

UNIT = ["case", "target", "partner"]


def layout_class(case: str, target: str, partner: str, threads: dict[str, int]) -> tuple | None:
    """(case, shares its container, its threads, its partners' threads), or None where a
    member's threads are unknown."""
    together, apart = read_partner_label(partner, CASE_LAYOUT[case][0])
    others = [*together, *apart]
    if target not in threads or any(m not in threads for m in others):
        return None
    return (case, bool(together), threads[target], sum(threads[m] for m in others))


def members(target: str, partner: str) -> set[str]:
    return {target, *partner.replace("|", "+").split("+")}


def residuals(rows: pd.DataFrame, threads: dict[str, int]) -> pd.DataFrame:
    """Per unit of a validation table (validate.validation_rows), its class, members and the mean
    residual over its metrics."""
    r = rows.dropna(subset=["ir_measured", "ir_predicted"]).astype({c: str for c in UNIT})
    r = r.assign(residual=r["ir_measured"] - r["ir_predicted"])
    out = r.groupby(UNIT, sort=True)["residual"].mean().reset_index()
    out["layout"] = [layout_class(c, t, p, threads) for c, t, p in zip(out.case, out.target, out.partner)]
    out["members"] = [members(t, p) for t, p in zip(out.target, out.partner)]
    return out.dropna(subset=["layout"])


def corrected(predicted: pd.DataFrame, training: pd.DataFrame, threads: dict[str, int]) -> pd.DataFrame:
    """The predictions (cpu_shares.PREDICTION_COLUMNS) shifted by their class's left-one-out
    mean residual in `training` (residuals()); `correction` and the reason say by how much."""
    out = predicted.copy()
    shifts, reasons = [], []
    for row in out.itertuples():
        cls = layout_class(str(row.case), row.target, str(row.partner), threads)
        seen = training[[c == cls and row.target not in m for c, m in zip(training.layout, training.members)]]
        shift = float(seen["residual"].mean()) if len(seen) else 0.0
        shifts.append(shift)
        reasons.append(
            f"corrected by {shift:+.3f}: the mean residual of {len(seen)} unit(s) of its layout without "
            f"{row.target}"
            if len(seen)
            else f"no unit of its layout without {row.target}: not corrected"
        )
    shift = np.array(shifts)
    out["ir"], out["ir_low"], out["ir_high"] = (
        out["ir"] + shift,
        out["ir_low"] + shift,
        out["ir_high"] + shift,
    )
    out["correction"] = shift
    out["reason"] = [f"{a}; {b}" if isinstance(a, str) and a else b for a, b in zip(out["reason"], reasons)]
    return out
