"""Runtime as a factor: the Case 1 baseline of each runtime side by side, relative to the
reference runtime (bare metal `host` where it ran, else docker) with its bootstrap CI, and a
figure of the relative performance per microservice and metric (results/stats/pairs/runtimes.tsv)."""

from __future__ import annotations

from interference import runtimes
from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures import PALETTE
from interference.rendering.kit.figures.runtimes import Relative, runtimes_figure
from interference.rendering.kit.format import and_list, esc, is_num, num, plural
from interference.studies.pairs.section.data import PairsData


class Runtimes:
    """The Case 1 baselines per runtime, relative to the reference runtime."""

    def __init__(self, data: PairsData):
        self.data = data

    def runtime_names(self) -> list[str]:
        rt = self.data.runtimes
        present = set(rt["runtime"]) if len(rt) else set(self.data.summary["runtime"])
        configured = [r for r in self.data.doc.config.get("runtimes", []) if r in present]
        return configured + sorted(present - set(configured))

    def relative_cell(self, r) -> str:
        if r.name == r["reference"]:  # r: one runtime's row, indexed by runtime
            return "1 (reference)"
        ci = (
            f" [{num(r['relative_ci_low'], 3)}, {num(r['relative_ci_high'], 3)}]"
            if is_num(r["relative_ci_low"])
            else ""
        )
        return f"{num(r['relative'], 3)}{ci}"

    def runtimes_table(self, host: str) -> Block:
        rt = self.data.runtimes[self.data.runtimes["host"] == host]
        names = self.runtime_names()
        reference = rt["reference"].iloc[0]
        others = [r for r in names if r != reference]
        rows = []
        for t in self.data.targets():
            for metric in self.data.metrics_of(t):
                d = rt[(rt["target"] == t) & (rt["metric"] == metric)].set_index("runtime")
                if d.empty:
                    continue
                row = [self.data.name(t) + f" ({t})", f"{metric.replace('_', ' ')} ({d['unit'].iloc[0]})"]
                row += [
                    num(d.loc[r, "mean"]) + f" (n = {num(d.loc[r, 'n'], 0)})" if r in d.index else "–"
                    for r in names
                ]
                row += [self.relative_cell(d.loc[r]) if r in d.index else "–" for r in others]
                rows.append(row)
        return self.data.table(
            ["Microservice", "Metric (unit)"]
            + [f"Mean on {r}" for r in names]
            + [f"{r} / {reference}" for r in others],
            rows,
            f"Case 1 baselines per runtime on {esc(host)}: the mean alone in a limited container, and each "
            f"runtime's performance relative to {esc(reference)} with its 95 % bootstrap interval (above 1: better "
            "than the reference, whatever the metric's direction).",
            group_first=True,
            numeric_from=2,
            table_class="rpt-table rpt-small",
        )

    def runtimes_figure(self, host: str) -> Block:
        rt = self.data.runtimes[
            (self.data.runtimes["host"] == host)
            & (self.data.runtimes["runtime"] != self.data.runtimes["reference"])
        ]
        reference = self.data.runtimes.loc[self.data.runtimes["host"] == host, "reference"].iloc[0]
        points = [
            Relative(f"{t} {metric.replace('_', ' ')}", r["runtime"], r["relative"], r["relative_ci_low"], r["relative_ci_high"])
            for t in self.data.targets()
            for metric in self.data.metrics_of(t)
            for _, r in rt[(rt["target"] == t) & (rt["metric"] == metric)].iterrows()
        ]  # fmt: skip
        colors = dict(zip([r for r in self.runtime_names() if r != reference], PALETTE))
        return self.data.figure(
            runtimes_figure(points, colors, reference),
            f"Case 1 performance of each runtime relative to {esc(reference)} on {esc(host)}, per microservice and "
            "metric (above 1: better than the reference). Whiskers: 95 % bootstrap interval; the line at 1 is "
            "the reference.",
            alt=f"Bar chart of Case 1 performance relative to {reference} per microservice, metric and runtime",
        )

    def runtimes_blocks(self) -> list[Block]:
        names = self.runtime_names()
        if len(names) < 2 or self.data.runtimes.empty:
            only = names[0] if names else "one runtime"
            return [
                md(f"This run used one runtime ({esc(only)}), so there is no comparison between runtimes.")
            ]
        about = and_list(
            f"{r} ({runtimes.description(r)})" if runtimes.description(r) != r else r for r in names
        )
        blocks = [
            md(
                f"The study ran on {plural(len(names), 'runtime')}: {about}. Each runtime's Case 1 baseline "
                "(a microservice alone with cgroup limits) is compared with the reference runtime's on the same "
                "host: bare metal where it ran, else Docker. The interference ratios of the other sections are "
                "each against its own runtime's baseline."
            )
        ]
        for host in sorted(set(self.data.runtimes["host"])):
            blocks += [self.runtimes_table(host), self.runtimes_figure(host)]
        return blocks
