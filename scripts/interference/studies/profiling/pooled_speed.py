"""cpu_speed.tsv of several profiling sessions of one host, pooled into one table.

A session's profile of a microservice moves between sessions by more than its own interval
says (Y's Case 1 ran at 0.61, 0.99, 1.05 and 1.15 of its 1u speed in four sessions of
2026-11-29, each interval about ±0.1): a profile is better taken from all of a host's sessions
than from one. Each point (a microservice's metric in one case, at one quota of the quota
sweep or one number of busy neighbours of the busy sweep) is pooled over the sessions that
measured it by a random-effects meta-analysis on the log of its speed (findings.pooling:
Paule and Mandel's between-session variance, the Hartung-Knapp-Sidik-Jonkman interval with k - 1
degrees of freedom), so the interval covers the mean over sessions, and widens when they
disagree. A point one session measured is that session's. The share at a busy point (`cores`)
and the CPU use are averaged: they follow the demand each session measured."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from interference.findings.pooling import random_effects

KEY = ["microservice", "metric", "case", "point"]  # the tables are of one host and runtime


def sweep_point(table: pd.DataFrame) -> pd.Series:
    """Which point of its case a row is: the busy sweep's neighbours, the quota sweep's cores."""
    return pd.Series(
        np.where(
            table["case"] == "1k",
            table["busy"].astype(str),
            np.where(table["case"] == "1q", table["cores"].astype(str), ""),
        ),
        index=table.index,
    )


def pooled(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """One cpu_speed table from several sessions' (each one host's, as cpu_speed.tsv)."""
    if len(tables) == 1:
        return tables[0]
    t = pd.concat([tab.assign(session=i) for i, tab in enumerate(tables)], ignore_index=True)
    if "busy" not in t:  # tables from before the busy sweep (2026-11-28) have no such column
        t["busy"] = np.nan
    t = t[t["speed"].notna() & (t["speed"] > 0)]
    t = t.assign(point=sweep_point(t))
    rows = []
    for _, g in t.groupby(KEY, sort=True, dropna=False):
        row = g.iloc[0].to_dict()
        with_ci = g[(g["ci_low"] > 0) & (g["ci_high"] > g["ci_low"])]
        k = g["session"].nunique()
        if len(with_ci) >= 2:
            p = random_effects(
                np.log(with_ci["speed"]), np.log(with_ci["ci_low"]), np.log(with_ci["ci_high"])
            )
            speed, low, high = math.exp(p.estimate), math.exp(p.low), math.exp(p.high)
            reason = f"random effects over {len(with_ci)} sessions (Paule-Mandel, HKSJ: t with {len(with_ci) - 1} df)"
        elif len(with_ci) == 1:
            speed, low, high = (float(with_ci[c].iloc[0]) for c in ("speed", "ci_low", "ci_high"))
            reason = f"one session of {k} with an interval: {with_ci['reason'].iloc[0]}"
        else:  # 1u (speed 1 by definition, so its interval too) or points without intervals
            speed = float(np.exp(np.log(g["speed"]).mean()))
            low = high = 1.0 if (g["speed"] == 1).all() else math.nan
            reason = f"geometric mean of {k} sessions"
        row.update(
            speed=speed, ci_low=low, ci_high=high, cores=g["cores"].mean(), cpu_cores=g["cpu_cores"].mean(),
            threads=int(round(g["threads"].median())), runs=int(g["runs"].sum()),
            ci_level="sessions" if len(with_ci) >= 2 else row.get("ci_level"), reason=reason,
        )  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows, columns=[c for c in t.columns if c not in ("session", "point")])
