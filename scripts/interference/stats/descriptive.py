"""Descriptive statistics every study uses: per group of a tidy sample table, n, mean,
median, the papers' trimmed mean, min, max, SD, CV and the t interval of the mean.

A tidy table has a `value`, a `status` ("ok" or what went wrong), and optionally `unit`,
`higher_is_better`, `in_overlap` (False: measured while a concurrent partner was not running)
and `own_steal` (the share of the member's own CPUs' time the hypervisor gave to others during
the iteration: telemetry_rates). Only samples with status "ok", a value, in_overlap True and
own_steal at most STEAL_LIMIT count; the others are counted in n_excluded_failed,
n_excluded_overlap or n_excluded_steal of their group. A statistic that cannot be
computed is left empty and the note says why."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from interference.stats.described import DESCRIBED

CONFIDENCE = 0.95
# The rule for steal, fixed before any scoring: an iteration during which the hypervisor took
# more than a tenth of its member's own CPUs' time ran on a machine the member did not have,
# and is left out (counted in n_excluded_steal). A tenth: on a CPU-bound iteration it slows the
# member by about as much as the papers' smaller effects (10 %); this VM has shown steal from 0
# (median, 2026-11) to 1.3 of its 2 CPUs.
STEAL_LIMIT = 0.10
# Declared with their kinds in described.py (every study's summary ends with them).
STAT_COLUMNS = DESCRIBED.columns


def as_bool(s: pd.Series) -> pd.Series:
    if s.dtype == bool:
        return s
    return s.map(lambda x: str(x).strip().lower() in ("true", "1", "yes")).astype(bool)


def prepare(samples: pd.DataFrame, text_columns=()) -> pd.DataFrame:
    """A normalised copy with the flags `_failed`, `_outside` and `_stolen` (mutually
    exclusive, in that order)."""
    df = samples.copy()
    for c in [*text_columns, "unit", "status"]:
        if c not in df:
            df[c] = ""
        df[c] = df[c].fillna("").astype(str)
    df["value"] = pd.to_numeric(df.get("value", np.nan), errors="coerce").astype(float)
    df["higher_is_better"] = as_bool(df.get("higher_is_better", pd.Series(True, index=df.index)))
    df["in_overlap"] = as_bool(df.get("in_overlap", pd.Series(True, index=df.index)))
    # A sample that failed is counted as failed even when it was also outside the overlap;
    # status "ok" without a value is a failure too (it cannot enter any statistic).
    df["_failed"] = (df["status"] != "ok") | df["value"].isna()
    df["_outside"] = ~df["_failed"] & ~df["in_overlap"]
    steal = pd.to_numeric(df.get("own_steal", pd.Series(np.nan, index=df.index)), errors="coerce")
    df["_stolen"] = ~df["_failed"] & ~df["_outside"] & (steal > STEAL_LIMIT)
    return df


def valid(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["_failed"] & ~df["_outside"] & ~df["_stolen"]]


def join(notes) -> str:
    return "; ".join(n for n in notes if n)


def trimmed_mean(values) -> float:
    """The papers' trimmed mean: the mean of the values within [P10, P90], bounds inclusive.

    NaN when no value lies in the window (only with two distinct values)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return np.nan
    lo, hi = np.percentile(v, [10, 90])
    kept = v[(v >= lo) & (v <= hi)]
    return float(kept.mean()) if kept.size else np.nan


def describe(samples: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """One row per group (columns: group + STAT_COLUMNS)."""
    df = prepare(samples, group)
    if df.empty:
        return pd.DataFrame(columns=group + STAT_COLUMNS)
    g = df.groupby(group, sort=True)
    out = g.agg(
        unit=("unit", "first"),
        higher_is_better=("higher_is_better", "first"),
        n_excluded_overlap=("_outside", "sum"),
        n_excluded_failed=("_failed", "sum"),
        n_excluded_steal=("_stolen", "sum"),
    )
    v = valid(df).groupby(group, sort=True)["value"]
    st = v.agg(["count", "mean", "median", "min", "max", "std", "sem"])
    st["trimmed_mean"] = v.agg(trimmed_mean)
    out = out.join(st, how="left").reset_index()
    out["n"] = out.pop("count").fillna(0).astype(int)
    # Identical values have zero spread; pandas' std can return rounding noise (1e-17) there.
    constant = (out["n"] >= 2) & (out["min"] == out["max"])
    out["sd"] = out.pop("std").mask(constant, 0.0)
    n, mean, sd, sem = out["n"], out["mean"], out["sd"], out.pop("sem").mask(constant, 0.0)
    out["cv"] = (sd / mean).where(mean != 0)
    # Student t interval of the mean: mean ± t(0.975, n-1) · sd/√n.
    with np.errstate(invalid="ignore", divide="ignore"):
        low, high = stats.t.interval(CONFIDENCE, df=(n - 1).clip(lower=1), loc=mean, scale=sem)
    has_spread = (n >= 2) & (sem > 0)
    zero_var = (n >= 2) & (sem == 0)
    # With zero variance the t interval degenerates to the mean itself (scipy says NaN).
    out["ci_low"] = np.where(has_spread, low, np.where(zero_var, mean, np.nan))
    out["ci_high"] = np.where(has_spread, high, np.where(zero_var, mean, np.nan))
    out["ci_method"] = "t"
    notes = []
    for r in out.itertuples(index=False):
        note = []
        if r.n == 0:
            note.append(
                f"no valid samples ({r.n_excluded_failed} failed, {r.n_excluded_overlap} outside the overlap"
                + (f", {r.n_excluded_steal} under steal" if r.n_excluded_steal else "")
                + ")"
            )
        elif r.n == 1:
            note.append("n=1: sd, cv and CI undefined")
        else:
            if r.sd == 0:
                note.append("zero variance: CI is the mean")
            if np.isnan(r.trimmed_mean):
                note.append("trimmed mean undefined: no sample within [P10, P90]")
        if r.n > 0 and r.mean == 0:
            note.append("mean is 0: cv undefined")
        notes.append(join(note))
    out["note"] = notes
    return out[group + STAT_COLUMNS]
