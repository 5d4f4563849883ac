"""results/stats/pairs/variance_components.tsv: how the variance of each microservice's metric
splits between iterations and runs (variance_components.nested, pooled over its cells), and the
iterations per run and runs per cell that Kalibera and Jones's cost model recommends for a 95 %
CI within +-5 % of a cell's mean on this host: the iteration's own measured seconds against a
run's overhead as measured (runs.tsv: a run's duration less the time its members' iterations
took, the median over the target's runs), or the duration model's setup and start costs where
no run of it was timed. A run here costs several seconds beyond its iterations (containers,
telemetry, removal), not the model's one: more iterations a run, fewer runs. Beside the pooled
components, each side of an IR's own (`baseline_*`: Case 1; `concurrent_*`: Cases 2, 3a, 3b),
the components its interval reads (statistics.TargetComponents) and the verdict price reads
where they rest on enough runs (steps/verdict_price.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.stats.descriptive import valid as _valid
from interference.stats.variance_components import recommend
from interference.studies.pairs import duration, schemas
from interference.studies.pairs.statistics import BASE_KEY, _prepare, components_by_target

TARGET_HALF_WIDTH = 0.05
COLUMNS = schemas.VARIANCE_COMPONENTS.columns  # declared with their kinds in ../schemas.py


def _members(target: str, partner: str) -> str:
    """A run's microservices in one order, from a sample's target and partner (a run's pair)."""
    return "+".join(sorted([target, *(partner.split("+") if partner else [])]))


def run_overheads(samples: pd.DataFrame, runs: pd.DataFrame | None) -> dict[tuple, list[float]]:
    """Per host, runtime and target, each of its runs' seconds beyond its iterations: the run's
    duration (runs.tsv) less the longest of its members' summed iteration times (members run at
    once), over the iterations the run timed (failed ones too)."""
    if runs is None or runs.empty or not {"start", "end"} <= set(samples.columns):
        return {}
    it = samples.assign(
        seconds=pd.to_numeric(samples["end"], errors="coerce")
        - pd.to_numeric(samples["start"], errors="coerce"),
        members=[_members(t, p) for t, p in zip(samples["target"], samples["partner"].fillna(""))],
    ).drop_duplicates(["host", "runtime", "case", "members", "repetition", "member", "iteration"])
    busy = (
        it.groupby(["host", "runtime", "case", "members", "repetition", "member"])["seconds"].sum()
        .groupby(level=[0, 1, 2, 3, 4]).max()
    )  # fmt: skip
    r = runs.assign(
        # The case from the run's key: runs.tsv gives the drift check's re-measured baseline
        # (case1-end/L) case "1" as well, the samples "1-end".
        case=runs["key"].astype(str).str.split("/").str[0].str.removeprefix("case"),
        members=[_members(*(str(p).split("+", 1) + [""])[:2]) for p in runs["pair"].astype(str)],
        repetition=pd.to_numeric(runs["repetition"], errors="coerce"),
        duration_s=pd.to_numeric(runs["duration_s"], errors="coerce"),
    ).dropna(subset=["duration_s"])
    key = ["host", "runtime", "case", "members", "repetition"]
    joined = r.set_index(key)["duration_s"].sub(busy.rename_axis(key)).dropna()
    joined = joined[~joined.index.duplicated()]  # a run imported twice (another host's copy)
    out: dict[tuple, list[float]] = {}
    targets = it.drop_duplicates([*key, "target"])
    for row in targets.itertuples(index=False):
        k = (row.host, row.runtime, row.case, row.members, row.repetition)
        if k in joined.index:
            out.setdefault((row.host, row.runtime, row.target), []).append(float(joined.loc[k]))
    return out


def _side(name: str, c) -> dict:
    """One side's components as columns (empty where it has no samples; its df 0 where no cell of
    it ran twice)."""
    if c is None:
        return {f"{name}_iteration_var": np.nan, f"{name}_run_var": np.nan, f"{name}_df_run": 0}
    return {f"{name}_iteration_var": c.iteration, f"{name}_run_var": c.run, f"{name}_df_run": c.df_run}


def variance_components(samples: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    df = _prepare(samples)
    v = _valid(df)
    model = duration.RUN_SETUP_S + duration.START_FILE_S
    measured = run_overheads(df, runs)
    kinds = components_by_target(v)
    rows = []
    for key, g in v.groupby(BASE_KEY, sort=True):
        timed = measured.get(key[:3], [])
        overhead = float(np.median(timed)) if timed else model
        source = f"measured: the median of {len(timed)} runs" if timed else "model: no run timed"
        c = kinds[key].pooled  # variance_components.nested over every cell of the target
        per_run = g.groupby(["case", "partner", "repetition"]).size()
        seconds = (
            pd.to_numeric(g.get("end"), errors="coerce") - pd.to_numeric(g.get("start"), errors="coerce")
        ).median()
        n, r = recommend(c, overhead, seconds if np.isfinite(seconds) else 1.0, TARGET_HALF_WIDTH)
        rows.append({
            **dict(zip(BASE_KEY, key)), "cells": g.groupby(["case", "partner"]).ngroups, "runs": len(per_run),
            "iterations_per_run": float(per_run.mean()), "iteration_var": c.iteration, "run_var": c.run,
            "run_share": c.run_share, "df_iteration": c.df_iteration, "df_run": c.df_run,
            "iteration_s": seconds, "run_overhead_s": overhead, "run_overhead_from": source,
            "recommended_iterations": n, "recommended_runs": r,
            **_side("baseline", kinds[key].baseline), **_side("concurrent", kinds[key].concurrent),
            "note": "" if c.df_run > 0 else "one run per cell: the variance between runs is not measured",
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
