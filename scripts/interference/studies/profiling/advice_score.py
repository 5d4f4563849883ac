"""The advice judged against the replicate (issue 55, item 4): a predictor's placements of each
measured pair set ordered as a second session of the same pairs orders them, and the
placement it would pick as good as the one that session would pick.

From validation rows (validate.validation_rows: the measured IR of session B, the prediction, the
replicate's IR of session A), per set of microservices and placement (a pair in Cases 2, 3a and
3b; a triple in Cases 2, 3a, 3b and 2-3a with each member apart), the total slowdown: −Σ of its
members' IRs of one metric each (as advise.py; a self-pair's two members are the one measured
row, twice). Then:

  ordering accuracy  over the two-placement comparisons of one set whose measured difference is
                     clear (its 95 % interval excludes 0): the share a predictor orders as
                     measured, with its Clopper–Pearson interval. The difference's interval
                     treats the members' IRs as independent, each with the SE its CI implies; two
                     placements of one set share their Case 1 baselines, whose error cancels in the
                     difference, so the interval is wider than it need be and fewer comparisons
                     count as clear (conservative).
  top-pick regret    per set, the measured total of the placement the predictor ranks first less
                     the best measured total (0: it picked the best); the mean over sets with a
                     percentile bootstrap interval over sets. Also for the replicate and the
                     one-line rule "separate containers, limited where the cores allow" (Case 3b
                     where measured; a triple without it: Case 3a, three apart and unlimited).
  Kendall's τ        of predicted against measured totals over every (set, placement), τ-b
                     (scipy), beside the replicate's.
The level: each total is one session's IRs (runs level within that session); the accuracy and
regret intervals cover the sets and comparisons drawn, not a third session."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from interference.core.groups import read_partner_label
from interference.stats.descriptive import CONFIDENCE

MIXED = "2-3a"  # a triple's two in one container, the third apart
SET_CASES = ("2", "3a", "3b", MIXED)
ONE_LINE_RULE = "3b"  # separate containers, each limited to its Case 1 cores (they fit on the host)
UNLIMITED_APART = "3a"  # the rule for a triple: three Case 1 cores do not fit on two
Z = stats.norm.ppf(0.5 + CONFIDENCE / 2)
SEED = 20240601
SCORE_COLUMNS = ["predictor", "measure", "value", "ci_low", "ci_high", "n", "note"]


def placement_totals(rows: pd.DataFrame, metrics: dict[str, str]) -> pd.DataFrame:
    """One row per (set, placement): the measured, predicted and replicate totals and the measured
    total's SE, for every pair and triple with a row for each member's chosen metric. A pair's
    placement is its case; a triple's is its case, and in Case 2-3a which member is apart."""
    r = rows[rows["case"].astype(str).isin(SET_CASES)]
    r = r[[metrics.get(t) == m for t, m in zip(r["target"], r["metric"])]]
    out = []
    for (members, placement), g in _by_placement(r):
        at = g.drop_duplicates("target").set_index("target")
        if not all(m in at.index for m in members):
            continue
        picked = [at.loc[m] for m in members]  # a self-pair: its one row twice
        # A member written twice is one row: its errors add, they do not average out.
        se = {m: (at.loc[m].measured_high - at.loc[m].measured_low) / (2 * Z) for m in set(members)}
        total_se = float(np.sqrt(sum((members.count(m) * e) ** 2 for m, e in se.items())))
        out.append({
            "set": "+".join(members), "case": placement,
            "measured": -sum(p.ir_measured for p in picked),
            "measured_se": total_se,
            "predicted": -sum(p.ir_predicted for p in picked),
            "replicate": -sum(p.ir_replicate for p in picked),
        })  # fmt: skip
    return pd.DataFrame(out, columns=["set", "case", "measured", "measured_se", "predicted", "replicate"])


def _by_placement(r: pd.DataFrame):
    """The rows grouped by (the set's members sorted, the placement)."""
    keys = []
    for case, target, partner in zip(r["case"].astype(str), r["target"], r["partner"].astype(str)):
        together, apart = read_partner_label(partner, shares_container=True)
        members = tuple(sorted([target, *together, *apart]))
        placement = case
        if case == MIXED:  # who is apart: the one after "|", else the target itself
            placement = f"{MIXED} ({'+'.join(apart) or target} apart)"
        keys.append((members, placement))
    return r.assign(_key=keys).groupby("_key", sort=True)


def clear_comparisons(totals: pd.DataFrame) -> pd.DataFrame:
    """Every two placements of one set whose measured difference's interval excludes 0."""
    out = []
    for s, g in totals.groupby("set", sort=True):
        g = g.reset_index(drop=True)
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                p, q = g.iloc[i], g.iloc[j]
                diff, se = p.measured - q.measured, np.hypot(p.measured_se, q.measured_se)
                if np.isfinite(se) and abs(diff) > Z * se:
                    out.append({"set": s, "first": p.case, "second": q.case, "measured": diff,
                                "predicted": p.predicted - q.predicted, "replicate": p.replicate - q.replicate})  # fmt: skip
    return pd.DataFrame(out, columns=["set", "first", "second", "measured", "predicted", "replicate"])


def regrets(totals: pd.DataFrame, by: str | None) -> np.ndarray:
    """Per set, the measured total of the pick (the lowest `by` total, or the one-line rule's
    case when by is None) less the set's lowest measured total."""
    out = []
    for _, g in totals.groupby("set", sort=True):
        if len(g) < 2:
            continue
        if by is None:
            pick = g[g["case"] == ONE_LINE_RULE]
            if pick.empty and g["set"].iloc[0].count("+") == 2:
                pick = g[g["case"] == UNLIMITED_APART]
            if pick.empty:
                continue
            chosen = pick.iloc[0].measured
        else:
            chosen = g.loc[g[by].idxmin(), "measured"]
        out.append(chosen - g["measured"].min())
    return np.array(out, float)


def score(rows: pd.DataFrame, metrics: dict[str, str], name: str = "profile") -> pd.DataFrame:
    """SCORE_COLUMNS: ordering accuracy, top-pick regret and Kendall's τ of the predictor
    (`name`), the replicate and the one-line rule."""
    totals = placement_totals(rows, metrics)
    clear = clear_comparisons(totals)
    out = []
    for predictor, column in ((name, "predicted"), ("replicate", "replicate")):
        usable = clear[np.isfinite(clear[column].astype(float))]
        right = int((np.sign(usable[column]) == np.sign(usable["measured"])).sum())
        n = len(usable)
        low, high = proportion_confint(right, n, 1 - CONFIDENCE, method="beta") if n else (np.nan, np.nan)
        out.append({"predictor": predictor, "measure": "ordering_accuracy", "value": right / n if n else np.nan,
                    "ci_low": low, "ci_high": high, "n": n,
                    "note": f"{right} of {n} clear comparisons ordered as measured"})  # fmt: skip
    for predictor, column in ((name, "predicted"), ("replicate", "replicate"), ("one_line_rule", None)):
        r = regrets(totals.dropna(subset=[column]) if column else totals, column)
        out.append({"predictor": predictor, "measure": "top_pick_regret", **_mean_interval(r), "n": len(r),
                    "note": "measured total of the pick less the set's best, mean over sets"})  # fmt: skip
    for predictor, column in ((name, "predicted"), ("replicate", "replicate")):
        t = totals.dropna(subset=[column])
        tau = stats.kendalltau(t[column], t["measured"]) if len(t) >= 3 else None
        out.append({"predictor": predictor, "measure": "kendall_tau",
                    "value": tau.statistic if tau else np.nan, "ci_low": np.nan, "ci_high": np.nan,
                    "n": len(t), "note": f"p = {tau.pvalue:.3g}" if tau else "fewer than 3 placements"})  # fmt: skip
    return pd.DataFrame(out, columns=SCORE_COLUMNS)


def _mean_interval(x: np.ndarray) -> dict:
    if len(x) == 0:
        return {"value": np.nan, "ci_low": np.nan, "ci_high": np.nan}
    if len(x) < 3 or np.ptp(x) == 0:
        return {"value": float(x.mean()), "ci_low": np.nan, "ci_high": np.nan}
    ci = stats.bootstrap((x,), np.mean, confidence_level=CONFIDENCE, method="percentile",
                         n_resamples=2000, random_state=np.random.default_rng(SEED)).confidence_interval  # fmt: skip
    return {"value": float(x.mean()), "ci_low": float(ci.low), "ci_high": float(ci.high)}
