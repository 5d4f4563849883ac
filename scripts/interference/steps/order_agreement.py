"""How the runs' start times follow the planned run order, per host: results/stats/run_order.tsv
(Kendall's tau between the plan, recomputed from what ran and the config's run_order, and the
order the runs started in), from every study's runs.tsv, so that the report only reads it.

  python -m interference.steps.order_agreement --runs-tables T... --order JSON \\
      --out results/stats/run_order.tsv"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from interference.core import run_order


def order_agreement(runs: pd.DataFrame, order: dict, host: str) -> dict:
    """How the runs of `host` in runs.tsv rows (study, runtime, key, repetition, started) were
    executed against the plan of the config `order` ({shuffle, seed}); `last` are the rows whose
    study put them after the others (column `after_all`, when present). The plan is a pure
    function of the set of runs and the seed, so it is recomputed here from what ran."""
    r = runs[(runs["host"] == host) & runs["started"].notna()].copy()
    if r.empty:
        return {"n_runs": 0}
    ids = list(zip(r["study"], r["runtime"], r["key"], r["repetition"].astype(int)))
    last_mask = (
        r["after_all"].fillna(False).astype(bool) if "after_all" in r else pd.Series(False, index=r.index)
    )
    positions = run_order.plan(
        [i for i, m in zip(ids, last_mask) if not m], [i for i, m in zip(ids, last_mask) if m], **order
    )
    planned = [positions[i] for i in ids]
    executed = r["started"].rank(method="first").astype(int) - 1
    from scipy import stats  # here: the step's other tables need none of scipy's import time

    # Both orders are permutations (no ties), so tau-b is the plain share of concordant pairs
    # minus discordant ones; one run agrees with itself.
    tau = stats.kendalltau(planned, executed).statistic if len(r) > 1 else 1.0
    return {
        "n_runs": len(r),
        "kendall_tau": float(tau),
        "span_s": float(r["started"].max() - r["started"].min()),
    }


ORDER_COLUMNS = ["host", "n_runs", "kendall_tau", "span_s", "shuffle", "seed"]


def run_order_table(runs: pd.DataFrame, order: dict) -> pd.DataFrame:
    """One row per host with started runs: ORDER_COLUMNS (the plan's shuffle and seed beside
    the agreement, so the report states the plan from this table, not from the config)."""
    order = {"shuffle": True, "seed": 1} | dict(order)  # the validated config's defaults
    rows = []
    if len(runs) and "started" in runs:
        runs = runs.assign(started=pd.to_numeric(runs["started"], errors="coerce"))
        for host in sorted(runs["host"].astype(str).unique()):
            a = order_agreement(runs, order, host)
            if a["n_runs"]:
                rows.append(
                    {"host": host, **a, "shuffle": bool(order["shuffle"]), "seed": int(order["seed"])}
                )
    return pd.DataFrame(rows, columns=ORDER_COLUMNS)


def read_runs(paths: list[Path]) -> pd.DataFrame:
    """Every study's runs.tsv as one frame (ids as text; an empty file adds nothing)."""
    frames = []
    for p in paths:
        try:
            df = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
        except pd.errors.EmptyDataError:
            continue  # a study without runs writes a runs.tsv without columns
        if "after_all" in df:
            df["after_all"] = df["after_all"].str.strip().str.lower().isin(["true", "1", "yes"])
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m interference.steps.order_agreement", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--runs-tables", nargs="*", type=Path, default=[], help="every study's runs.tsv")
    ap.add_argument("--order", required=True, help="the config's run_order, as JSON")
    ap.add_argument("--out", type=Path, required=True, help="run_order.tsv to write")
    a = ap.parse_args(argv)
    table = run_order_table(read_runs(a.runs_tables), json.loads(a.order))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(a.out, sep="\t", index=False, float_format="%.6f")
    print(f"run order of {len(table)} hosts -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
