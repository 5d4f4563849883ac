"""The limit's effect and the partner's: each concurrent IR split with the unlimited baseline.

A Case 2 or 3a IR compares two pairs of conditions at once: the container lost its limits and
gained a partner. With Case 1u (the target alone, unlimited) each splits into
  limit   = IR of 1u against 1    (what removing the limits alone does)
  partner = IR of 2/3a against 1u (what the partner does, limits equal: none)
Case 3b keeps Case 1's limits, so its partner effect is its IR against Case 1 and it has no limit
effect. Each with its 95 % bootstrap CI (statistics.ir_bootstrap_ci). Without Case 1u the limit
and partner columns of Cases 2/3a are empty and the reason says so.
results/stats/pairs/split.tsv."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.stats.descriptive import join as _join
from interference.stats.descriptive import valid as _valid
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import CONCURRENT_CASES, UNLIMITED, UNLIMITED_CASES
from interference.studies.pairs.statistics import (
    BASELINE,
    GROUP,
    N_RESAMPLES,
    SEED,
    _map,
    _prepare,
    components_by_target,
    ir_bootstrap_ci,
    ir_components_ci,
    ir_value,
    runs_measured,
    runs_of,
)

EFFECTS = ("total", "limit", "partner")
# Where the two parts pull against each other, beyond this either way (a share of the baseline):
# the `opposed` column the pair section counts.
OPPOSED_MARGIN = 0.02
LIMIT_OUTWEIGHS = "a gain against Case 1 although the partner alone costs: the limit's removal outweighs it"
PARTNER_OUTWEIGHS = "a loss against Case 1 although the partner alone gains: the limit outweighs it"


def opposed(total: float, partner: float) -> str:
    """Which part outweighs the other where the total and the partner's part differ in sign."""
    if total > OPPOSED_MARGIN and partner < -OPPOSED_MARGIN:
        return LIMIT_OUTWEIGHS
    if total < -OPPOSED_MARGIN and partner > OPPOSED_MARGIN:
        return PARTNER_OUTWEIGHS
    return ""


COLUMNS = schemas.SPLIT.columns  # declared with their kinds in ../schemas.py


def split(samples: pd.DataFrame, jobs: int = 1) -> pd.DataFrame:
    df = _prepare(samples)
    valid = _valid(df)
    comps = components_by_target(valid)
    values = {k: runs_of(g) for k, g in valid.groupby(GROUP, sort=False)}
    alone = ["host", "runtime", "target", "metric"]
    by_case = {
        case: {k: runs_of(g) for k, g in valid[valid["case"] == case].groupby(alone)}
        for case in (BASELINE, UNLIMITED)
    }
    conc = df[df["case"].isin(CONCURRENT_CASES)]
    groups = conc.groupby(GROUP, sort=True).agg(unit=("unit", "first"), higher=("higher_is_better", "first"))
    rows, tasks, slots = [], [], []
    for key, meta in groups.iterrows():
        host, runtime, case, target, partner, metric = key
        x = values.get(key, [])
        base = by_case[BASELINE].get((host, runtime, target, metric), [])
        free = by_case[UNLIMITED].get((host, runtime, target, metric), [])
        comp = comps.get((host, runtime, target, metric))
        higher = bool(meta["higher"])
        row = dict(
            zip(GROUP, key),
            unit=meta["unit"],
            higher_is_better=higher,
            n=sum(r.size for r in x),
            baseline_n=sum(r.size for r in base),
            unlimited_n=sum(r.size for r in free),
            reason="",
        )
        row.update({f"{e}_{c}": np.nan for e in EFFECTS for c in ("ir", "ci_low", "ci_high")})
        reasons = []
        # (effect, samples, its baseline's samples, the samples' case, the baseline's)
        wanted = [("total", x, base, case, BASELINE)]
        if case in UNLIMITED_CASES:
            row["partner_baseline"] = UNLIMITED
            if free:
                wanted += [("limit", free, base, UNLIMITED, BASELINE), ("partner", x, free, case, UNLIMITED)]
            else:
                reasons.append(
                    f"no Case {UNLIMITED} samples: the limit's and the partner's effects are not separable"
                )
        else:
            row["partner_baseline"] = BASELINE
            wanted.append(("partner", x, base, case, BASELINE))
        for effect, a_runs, b_runs, a_case, b_case in wanted:
            a = np.concatenate(a_runs) if a_runs else np.empty(0)
            b = np.concatenate(b_runs) if b_runs else np.empty(0)
            if a.size == 0 or b.size == 0 or b.mean() == 0:
                reasons.append(f"{effect}: no valid samples on a side")
                continue
            row[f"{effect}_ir"] = ir_value(a.mean(), b.mean(), higher)
            if runs_measured(comp) and min(a.size, b.size) >= 2:
                low, high, _, notes = ir_components_ci(a_runs, b_runs, higher, comp, a_case, b_case)
                row[f"{effect}_ci_low"], row[f"{effect}_ci_high"] = low, high
                reasons += [f"{effect}: {n}" for n in notes]
            elif min(a.size, b.size) >= 2:
                tasks.append((np.sort(a), np.sort(b), higher, N_RESAMPLES, SEED, (*key, effect)))
                slots.append((row, effect))
            else:
                reasons.append(f"{effect}: fewer than 2 samples on a side, no CI")
        row["reason"] = _join(reasons)
        row["opposed"] = opposed(row["total_ir"], row["partner_ir"]) if case in UNLIMITED_CASES else ""
        rows.append(row)
    for (row, effect), (lo, hi, _method, reason) in zip(slots, _map(ir_bootstrap_ci, tasks, jobs)):
        row[f"{effect}_ci_low"], row[f"{effect}_ci_high"] = lo, hi
        row["reason"] = _join([row["reason"], reason])
    return pd.DataFrame(rows, columns=COLUMNS)
