"""The paired IR: a member with and without its partners inside the same run (phases.py).

Per run, the log ratio of the mean of its *with* iterations to the mean of its *without* ones
(oriented: log(with/without) where higher is better, the same ratio otherwise, since the IR is
then 1 - ratio). What a run adds to both sides (its container, its moment on the host) cancels
in it. The partner effect is exp(mean over runs) with a t interval over runs: the runs' spread
about their cell's mean is pooled over the partners of a host, runtime, case, target and metric
(one variance of the run-level ratio per target and case, with sum(runs - 1) degrees of freedom;
not over cases: two members in one container, Case 2, vary from run to run far more than two
pinned containers, measured). Where no cell of the target ran twice, the interval is over the
blocks of its runs (each block's own with/without ratio), which the level says: it covers the
iterations and the phases, not the runs.

In Case 3b a member's *without* phase is Case 1 (its limited container), so the partner effect is
the paper's IR. In the unlimited cases (2, 3a, 2-3a) it is against Case 1u; the paper's IR is then
the product with the limit's effect (Case 1u against 1, interference.tsv's 1u row), whose SE every
unlimited cell of the target shares (the *baseline* part of interference.tsv's SE)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from interference.stats.variance_components import welch_df
from interference.studies.pairs.cases import UNLIMITED_CASES

WITH, WITHOUT = "with", "without"
RUNS_PAIRED = "runs, paired"
BLOCKS_PAIRED = "blocks of one run, paired"
KEY = ["host", "runtime", "case", "target", "partner", "metric"]
BASE_KEY = ["host", "runtime", "target", "metric"]
# The runs' variance is pooled over the partners within these.
POOL_KEY = ["host", "runtime", "case", "target", "metric"]


@dataclass(frozen=True)
class Paired:
    """A cell's partner effect on the log-ratio scale: estimate, SE, df and the level covered."""

    log_ratio: float
    se: float
    df: float
    level: str
    runs: int
    blocks: int


def _log_ratio(with_mean: float, without_mean: float) -> float:
    if with_mean > 0 and without_mean > 0:
        return math.log(with_mean / without_mean)
    return math.nan


def run_ratios(valid: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and run: the run's log ratio, and its blocks' (a list)."""
    d = valid[valid["phase"].isin([WITH, WITHOUT])]
    if d.empty:
        return pd.DataFrame(columns=[*KEY, "repetition", "log_ratio", "block_ratios"])
    rows = []
    for key, g in d.groupby([*KEY, "repetition"], sort=True):
        side = g.groupby("phase")["value"].mean()
        if not {WITH, WITHOUT} <= set(side.index):
            continue
        by_block = g.groupby(["block", "phase"])["value"].mean().unstack()
        blocks = [_log_ratio(r[WITH], r[WITHOUT]) for _, r in by_block.dropna().iterrows()]
        rows.append((*key, _log_ratio(side[WITH], side[WITHOUT]), [b for b in blocks if math.isfinite(b)]))
    out = pd.DataFrame(rows, columns=[*KEY, "repetition", "log_ratio", "block_ratios"])
    return out[np.isfinite(out["log_ratio"])]


def partner_effects(valid: pd.DataFrame) -> dict[tuple, Paired]:
    """Each phased cell's partner effect (see the module's docstring), keyed by KEY's values."""
    runs = run_ratios(valid)
    out: dict[tuple, Paired] = {}
    for _, target in runs.groupby(POOL_KEY, sort=False):
        cells = target.groupby(KEY, sort=True)["log_ratio"]
        # The run-level variance pooled over the target's partners in the case.
        dev = cells.transform(lambda x: x - x.mean())
        df = int((cells.size() - 1).sum())
        pooled_var = float((dev**2).sum() / df) if df > 0 else math.nan
        for key, g in target.groupby(KEY, sort=True):
            n = len(g)
            blocks = [b for bs in g["block_ratios"] for b in bs]
            if df > 0:
                out[key] = Paired(float(g["log_ratio"].mean()), math.sqrt(pooled_var / n), df, RUNS_PAIRED,
                                  n, len(blocks))  # fmt: skip
            elif len(blocks) >= 2:
                out[key] = Paired(float(g["log_ratio"].mean()), float(np.std(blocks, ddof=1) / math.sqrt(len(blocks))),
                                  len(blocks) - 1, BLOCKS_PAIRED, n, len(blocks))  # fmt: skip
            else:
                out[key] = Paired(float(g["log_ratio"].mean()), math.nan, math.nan, "", n, len(blocks))
    return out


def ratio_to_ir(ratio: float, higher_is_better: bool) -> float:
    return ratio - 1 if higher_is_better else 1 - ratio


def ir_to_ratio(ir: float, higher_is_better: bool) -> float:
    return 1 + ir if higher_is_better else 1 - ir


def log_se_of_row(row: dict) -> tuple[float, float]:
    """(log-ratio estimate, its SE) of an interference.tsv row: its IR's SE parts are the ratio
    times the log ratio's (delta method), whichever way the metric points."""
    ratio = ir_to_ratio(row["ir"], bool(row["higher_is_better"]))
    if not ratio > 0:
        return math.nan, math.nan
    return math.log(ratio), math.hypot(row["ir_se_own"], row["ir_se_baseline"]) / ratio


def paired_row(row: dict, effect: Paired, limit: dict | None, confidence: float) -> dict:
    """interference.tsv's row with the paired IR in its IR columns (the unpaired one moved
    beside them): the partner effect alone (Case 3b) or times the limit effect (`limit`, the
    target's 1u row, in the unlimited cases)."""
    h = bool(row["higher_is_better"])
    out = {"ir_unpaired": row["ir"], "ir_unpaired_ci_low": row["ir_ci_low"],
           "ir_unpaired_ci_high": row["ir_ci_high"], "blocks": effect.blocks}  # fmt: skip
    g, se_own, df_own = effect.log_ratio, effect.se, effect.df
    out["paired_partner_ir"] = ratio_to_ir(math.exp(g), h)
    if math.isfinite(se_own):
        t_own = stats.t.ppf(0.5 + confidence / 2, df_own)
        out["paired_partner_ci_low"], out["paired_partner_ci_high"] = sorted(
            ratio_to_ir(math.exp(g + s * t_own * se_own), h) for s in (-1, 1)
        )
    se_base, df_base, notes = 0.0, math.nan, []
    if row["case"] in UNLIMITED_CASES:
        lg, lse = log_se_of_row(limit) if limit is not None else (math.nan, math.nan)
        if not math.isfinite(lse):
            return {
                **out,
                "reason": _with(
                    row, "paired partner effect only: no runs-level Case 1u IR for the limit's effect"
                ),
            }
        g, se_base, df_base = g + lg, lse, limit["ci_df"]
        notes.append("the partner's effect (with/without in each run) times the limit's (Case 1u against 1)")
    if not math.isfinite(se_own):
        return {**out, "reason": _with(row, "paired: too few runs or blocks for an interval")}
    se = math.hypot(se_own, se_base)
    df = welch_df(se_own**2, df_own, se_base**2, df_base)
    df = min(df, max(df_own, df_base if se_base > 0 else 0))  # never above its largest piece's
    t = stats.t.ppf(0.5 + confidence / 2, df)
    ratio = math.exp(g)
    ends = sorted(ratio_to_ir(math.exp(g + s * t * se), h) for s in (-1, 1))
    return {**out, "ir": ratio_to_ir(ratio, h), "ir_ci_low": ends[0], "ir_ci_high": ends[1],
            "ir_ci_method": f"paired_t{df:.3g}", "ci_level": effect.level, "ir_se_own": ratio * se_own,
            "ir_se_baseline": ratio * se_base, "df_own": df_own, "df_baseline": df_base, "ci_df": df,
            "reason": _with(row, "; ".join(notes))}  # fmt: skip


def _with(row: dict, note: str) -> str:
    """The row's reason: the paired IR's note, then what the unpaired one beside it said."""
    unpaired = row.get("reason", "")
    return "; ".join(n for n in (note, f"unpaired IR: {unpaired}" if unpaired else "") if n)
