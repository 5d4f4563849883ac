"""results/stats/pairs/variance_components.tsv: how the variance of each microservice's metric
splits between iterations and runs (variance_components.nested, pooled over its cells), and the
iterations per run and runs per cell that Kalibera and Jones's cost model recommends for a 95 %
CI within +-5 % of a cell's mean on this host: the iteration's own measured seconds against a
run's overhead (the duration model's setup and start costs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.stats.descriptive import valid as _valid
from interference.stats.variance_components import nested, recommend
from interference.studies.pairs import duration, schemas
from interference.studies.pairs.statistics import BASE_KEY, _prepare

TARGET_HALF_WIDTH = 0.05
COLUMNS = schemas.VARIANCE_COMPONENTS.columns  # declared with their kinds in ../schemas.py


def variance_components(samples: pd.DataFrame) -> pd.DataFrame:
    df = _prepare(samples)
    v = _valid(df)
    overhead = duration.RUN_SETUP_S + duration.START_FILE_S
    rows = []
    for key, g in v.groupby(BASE_KEY, sort=True):
        c = nested(g["value"], list(zip(g["case"], g["partner"])), g["repetition"])
        per_run = g.groupby(["case", "partner", "repetition"]).size()
        seconds = (
            pd.to_numeric(g.get("end"), errors="coerce") - pd.to_numeric(g.get("start"), errors="coerce")
        ).median()
        n, r = recommend(c, overhead, seconds if np.isfinite(seconds) else 1.0, TARGET_HALF_WIDTH)
        rows.append({
            **dict(zip(BASE_KEY, key)), "cells": g.groupby(["case", "partner"]).ngroups, "runs": len(per_run),
            "iterations_per_run": float(per_run.mean()), "iteration_var": c.iteration, "run_var": c.run,
            "run_share": c.run_share, "df_iteration": c.df_iteration, "df_run": c.df_run,
            "iteration_s": seconds, "run_overhead_s": overhead, "recommended_iterations": n, "recommended_runs": r,
            "note": "" if c.df_run > 0 else "one run per cell: the variance between runs is not measured",
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
