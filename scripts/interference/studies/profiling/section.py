"""The profiling study's report section: what it ran (from runs.tsv) and, per microservice, the
resource it is sensitive to and the one it presses on — the inputs of the placement predictor
(predict.py), shown so that a reader can see why an advice ranks a placement where it does."""

from __future__ import annotations

import pandas as pd

from interference.report.blocks import Block, md
from interference.report.format import esc, num, pct
from interference.studies.profiling.plan import RESOURCES


def profile_table(sensitivity: pd.DataFrame, pressure: pd.DataFrame, placement: str = "3a") -> pd.DataFrame:
    """One row per microservice (and metric) of one placement: its degradation beside each
    resource's largest bubble (the most negative of its metrics: the one a bubble hurts most) and
    its pressure on each resource (in that bubble's units; NaN where not measured)."""
    s = sensitivity[sensitivity["placement"].astype(str) == placement].copy()
    s["intensity"] = pd.to_numeric(s["intensity"], errors="coerce")
    s["degradation"] = pd.to_numeric(s["degradation"], errors="coerce")
    p = pressure[pressure["placement"].astype(str) == placement].copy()
    p["pressure"] = pd.to_numeric(p["pressure"], errors="coerce")
    rows = []
    for ms in sorted(set(s["microservice"]) | set(p["microservice"])):
        row = {"microservice": ms}
        for r in RESOURCES:
            mine = s[(s["microservice"] == ms) & (s["resource"] == r)]
            top = mine[mine["intensity"] == mine["intensity"].max()] if not mine.empty else mine
            row[f"sensitivity_{r}"] = top["degradation"].min() if not top.empty else float("nan")
            row[f"largest_{r}"] = top["intensity"].max() if not top.empty else float("nan")
            pr = p[(p["microservice"] == ms) & (p["resource"] == r)]["pressure"]
            row[f"pressure_{r}"] = pr.iloc[0] if not pr.empty else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


class Profiling:
    def __init__(self, doc):
        self.doc = doc
        self.sensitivity = doc.stats.table("profiling", "sensitivity")
        self.pressure = doc.stats.table("profiling", "pressure")
        self.runs = doc.stats.table("profiling", "runs")

    def method(self) -> list[Block]:
        r = self.runs
        n = len(r)
        keys = r["key"].astype(str) if "key" in r else pd.Series(dtype=str)
        beside = keys.str.contains(r"/(?:cpu|memory|disk|network)-").sum()
        probe = keys.str.contains("/Q/").sum()
        return [
            md(
                f"{n} runs (results/stats/profiling/runs.tsv): each microservice alone, limited (Case 1) and "
                f"unlimited (Case 1u), and beside a tunable bubble ({beside} runs with a microservice or the "
                f"probe beside a bubble); the reference probe Q in {probe} runs, alone, beside each bubble and "
                "beside each microservice. No pair of microservices is measured here: the predicted pairs are "
                "all held out. The model and its limits: docs/placement.md."
            )
        ]

    def table(self, placement: str = "3a") -> list[Block]:
        t = profile_table(self.sensitivity, self.pressure, placement)
        if t.empty:
            return [md("No profiles measured.")]
        measured = [
            r for r in RESOURCES if t[f"sensitivity_{r}"].notna().any() or t[f"pressure_{r}"].notna().any()
        ]
        head = ["Microservice"] + [f"{r}: slowed by the largest bubble" for r in measured]
        head += [f"{r}: pressure" for r in measured]
        rows = []
        for x in t.to_dict("records"):
            cells = [esc(x["microservice"])]
            cells += [f"{pct(x[f'sensitivity_{r}'])} (at {num(x[f'largest_{r}'], 1)})" for r in measured]
            cells += [num(x[f"pressure_{r}"], 2) for r in measured]
            rows.append(cells)
        return [
            self.doc.table(
                head,
                rows,
                f"Placement {esc(placement)}: each microservice's change beside the largest bubble of each "
                "resource (its worst metric; negative is slower) and its pressure on each resource, in that "
                "bubble's units (cpu: cores, memory: MB, disk: MB/s, network: Gbit/s); "
                "results/stats/profiling/sensitivity.tsv, pressure.tsv.",
                numeric_from=1,
            )
        ]
