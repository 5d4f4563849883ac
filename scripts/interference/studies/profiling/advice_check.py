"""The advice checked on measured placements: of the placements advise.py ranked that the pair
study measured (Cases 2, 3a, 3b and a triple's 2-3a), the recommended one (best ranked) and the
worst ranked, compared run by run.

Each run of a placement measures all its members at once, so each run gives a total slowdown:
Σ over members of −IR, a member's IR its run's mean (ok iterations inside the overlap) of its
chosen metric against the mean of its Case 1 iterations, as interference.tsv defines it
(higher-is-better: mean/baseline − 1; lower-is-better: 1 − mean/baseline). The two placements'
per-run totals are compared by Welch's t interval of the difference of their means, the run
being the unit; the baselines are the same in both placements, so their noise mostly cancels
in the difference and is not added. Verdict: the measured order *matches* the advice when the
interval lies below 0 (the recommended placement measured better), is *reversed* when it lies
above 0, and is *undecided* when it spans 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from interference.stats.descriptive import CONFIDENCE

CHECK_COLUMNS = [
    "role", "rank", "placement", "case", "predicted_total", "predicted_low", "predicted_high",
    "measured_total", "runs", "run_totals", "difference", "difference_low", "difference_high", "df", "verdict",
]  # fmt: skip
MIN_RUNS = 4  # per placement: no interval rests on two or three runs


def run_totals(
    samples: pd.DataFrame, case: str, labels: dict[str, str], metrics: dict[str, str]
) -> pd.Series:
    """Total slowdown per run (repetition) of the placement whose members' partner labels are
    `labels` (member -> label) in `case`; a run lacking a member's value is left out."""
    ok = samples[samples.status.eq("ok") & samples.value.notna()]
    per_member = []
    for member, label in labels.items():
        metric = metrics[member]
        base = ok[(ok.case == "1") & (ok.target == member) & (ok.metric == metric)].value
        runs = ok[
            (ok.case == case)
            & (ok.target == member)
            & (ok.partner == label)
            & (ok.metric == metric)
            & ok.in_overlap
        ]
        higher = bool(runs.higher_is_better.iloc[0]) if len(runs) else True
        means = runs.groupby("repetition").value.mean()
        ir = means / base.mean() - 1 if higher else 1 - means / base.mean()
        per_member.append(-ir.rename(member))
    if not per_member:
        return pd.Series(dtype=float)
    return pd.concat(per_member, axis=1).dropna().sum(axis=1)


def welch_interval(a, b) -> tuple[float, float, float, float]:
    """mean(a) − mean(b) with its Welch t interval and degrees of freedom."""
    result = stats.ttest_ind(np.asarray(a, float), np.asarray(b, float), equal_var=False)
    ci = result.confidence_interval(CONFIDENCE)
    return float(np.mean(a) - np.mean(b)), float(ci.low), float(ci.high), float(result.df)


def verdict(low: float, high: float) -> str:
    if not (np.isfinite(low) and np.isfinite(high)):
        return "undecided"
    return "matches" if high < 0 else "reversed" if low > 0 else "undecided"


def check(advice: pd.DataFrame, samples: pd.DataFrame, labels_of, metrics: dict[str, str]) -> pd.DataFrame:
    """CHECK_COLUMNS: the recommended and the worst-ranked of the ranked placements with at least
    MIN_RUNS measured runs, then their difference. `labels_of(placement label)` gives each
    member's partner label in it (advise.Placement.partner_of)."""
    samples = samples.astype({"case": str, "target": str, "partner": str, "metric": str})
    samples = samples.assign(partner=samples.partner.replace("nan", ""))
    ranked = advice[advice["rank"].notna() & advice.case.fillna("").ne("")].sort_values("rank")
    measured = []
    for r in ranked.itertuples(index=False):
        totals = run_totals(samples, str(r.case), labels_of(r.placement), metrics)
        if len(totals) >= MIN_RUNS:
            measured.append((r, totals))
    if len(measured) < 2:
        return pd.DataFrame(columns=CHECK_COLUMNS)
    rows = []
    for role, (r, totals) in (("recommended", measured[0]), ("worst ranked", measured[-1])):
        rows.append({
            "role": role, "rank": r.rank, "placement": r.placement, "case": r.case,
            "predicted_total": r.total_slowdown, "predicted_low": r.slowdown_low, "predicted_high": r.slowdown_high,
            "measured_total": totals.mean(), "runs": len(totals),
            "run_totals": ", ".join(f"{t:.3f}" for t in totals),
        })  # fmt: skip
    d, low, high, df = welch_interval(measured[0][1], measured[-1][1])
    rows.append({"role": "recommended − worst ranked", "difference": d, "difference_low": low,
                 "difference_high": high, "df": df, "verdict": verdict(low, high)})  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=CHECK_COLUMNS)
