"""The creation study's report section: method, creation time against N per runtime (Fig. 4's
layout), paper 001's Table I layout for nested parents × children beside the published values,
and what the runs recorded about the VMs' emulation. The paper's findings are judged once, by the
findings step (findings.section.study_blocks shows them)."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures.scaling import Series, scaling_figure
from interference.rendering.kit.format import esc, is_num, num, numi, recorded
from interference.stores.stats_tables import vm_acceleration
from interference.studies.creation.published import SOURCE


class Creation:
    def __init__(self, doc):
        self.doc = doc
        self.cfg = doc.study_config("creation")
        s = doc.stats.table("creation", "summary", numeric="auto")
        self.summary = s
        self.exit = s[s["metric"] == "created_to_exit"].copy()
        self.table1 = doc.stats.table("creation", "table1", numeric="auto")
        self.runs = doc.stats.table("creation", "runs", numeric=("entities", "children", "repetition"))

    @staticmethod
    def label(r) -> str:
        return f"{r['runtime']} ({r['variant']})" if r["variant"] else r["runtime"]

    def ran(self) -> tuple[str, str]:
        """The N that ran and the runs of each setting (runtime, variant, N, children), from
        runs.tsv rather than the config; '–' and '' when no run was recorded."""
        r = self.runs
        if r.empty or "entities" not in r:
            return "–", ""
        n = pd.to_numeric(r["entities"], errors="coerce").dropna()
        cell = [c for c in ("host", "runtime", "variant", "entities", "children") if c in r]
        return ", ".join(numi(x) for x in sorted(n.unique())), recorded(r.groupby(cell).size())

    def method(self) -> list[Block]:
        entities, runs = self.ran()
        return [
            md(
                "Paper 001's Experiments 2 and 3: N entities are created at once, each running sysbench with "
                "primes up to 1 and one event (a negligible workload), N in "
                f"{esc(entities)}, {runs or 'an unrecorded number of'} runs of each setting "
                "(results/stats/creation/runs.tsv). "
                "Timed per entity, from the order to create it until its command has exited: a container or "
                "an LXC container from start to exit; a VM from creation through boot to exit (its deletion is "
                "the `removed` time); a nested container from the parent's start — its Docker engine ready, the "
                "child image loaded (`load`) or found on a pre-loaded read-only data root (`preloaded`) — "
                "through its children's exit. Each entity gets an adapter of its own, so each nested entity is "
                "a parent of its own."
            )
        ]

    def figure(self) -> list[Block]:
        series = []
        for key, d in self.exit.groupby(["runtime", "variant"], sort=True):
            d = d[d["children"] == d["children"].min()].sort_values("entities")
            label = f"{key[0]} ({key[1]})" if key[1] else key[0]
            series.append(
                Series(
                    label,
                    [int(n) for n in d["entities"]],
                    list(d["mean"]),
                    [lo if is_num(lo) else m for lo, m in zip(d["ci_low"], d["mean"])],
                    [hi if is_num(hi) else m for hi, m in zip(d["ci_high"], d["mean"])],
                )
            )
        if not series:
            return [md("No creation results.")]
        fig = scaling_figure(
            series,
            None,
            "creation to exit (s, log scale)",
            "concurrent entities N",
            reference=None,
            log_y=True,
        )
        return [
            self.doc.figure(
                fig,
                "Mean time from creating an entity to its exit with N created at once (95 % t whiskers), as "
                "paper 001's Fig. 4; a whisker reaching 0 or below is cut at a tenth of the mean.",
                "Line chart of creation time against the number of concurrent entities, one line per runtime.",
            )
        ]

    def table(self) -> list[Block]:
        rows = []
        for r in self.summary.itertuples(index=False):
            label = f"{r.runtime} ({r.variant})" if r.variant else r.runtime
            ci = f"[{num(r.ci_low, 2)}, {num(r.ci_high, 2)}]" if is_num(r.ci_low) else "–"
            rows.append([label, r.metric.replace("_", " "), num(r.entities, 0), num(r.children, 0), num(r.n, 0),
                         num(r.mean, 2), num(r.sd, 2), ci])  # fmt: skip
        return [
            self.doc.table(
                ["Runtime", "Time", "N", "Children", "Samples", "Mean (s)", "SD (s)", "95 % CI"],
                rows,
                "Per entity: setup (a nested parent's engine and image, else 0), creation to exit, and to "
                "removal (results/stats/creation/summary.tsv).",
                numeric_from=2,
            )
        ]

    def table1_blocks(self) -> list[Block]:
        t = self.table1
        if t.empty:
            return []
        out = []
        for variant, d in t.groupby("variant"):
            parents = sorted(d["parents"].unique())
            rows = []
            for children, g in d.groupby("children"):
                cells = g.set_index("parents")
                row = [num(children, 0)]
                for p in parents:
                    if p not in cells.index:
                        row.append("–")
                        continue
                    c = cells.loc[p]
                    ours = f"{num(c['mean_s'], 1)} s σ={num(c['sd_s'], 2)}"
                    paper = (
                        f" (paper {num(c['published_mean_s'], 0)} s σ={num(c['published_sd_s'], 2)})"
                        if is_num(c["published_mean_s"])
                        else ""
                    )
                    row.append(ours + paper)
                rows.append(row)
            out.append(
                self.doc.table(
                    ["Children per parent"] + [f"{p} parent{'s' if p > 1 else ''}" for p in parents],
                    rows,
                    f"Time to create nested containers (child image: {esc(variant)}), in the layout of "
                    f"{esc(SOURCE)}, with the published value beside ours.",
                    numeric_from=1,
                )
            )
        return out

    def emulation(self) -> list[Block]:
        """What the runs recorded about the VMs' emulation (the paper's findings themselves are
        judged by the findings step and shown by findings.section.study_blocks)."""
        note = vm_note(self.doc.env).strip()
        return [md(note)] if note else []


def vm_note(env: dict) -> str:
    """The VMs' acceleration as the runs recorded it (environment.json), when it was emulation."""
    accel = vm_acceleration(env)
    if accel is None or accel[0] != "tcg":
        return ""
    return " The VMs here are emulated (TCG" + (f": {esc(accel[1])}" if accel[1] else "") + ")."


def section(doc) -> Creation:
    return Creation(doc)
