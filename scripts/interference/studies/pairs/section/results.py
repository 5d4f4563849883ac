"""Results per resource and microservice: the papers' tables (Case × partner: Mean, Median,
Tr. Mean, Max, Min, SD, CV, n), bars of the means, IR bars per case, and the IR heat map."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures.grouped_bars import Group, Panel
from interference.rendering.kit.figures.heatmap import heatmap_figure
from interference.rendering.kit.figures.ir import ir_figure
from interference.rendering.kit.figures.means import means_figure
from interference.rendering.kit.format import esc, is_num, num, pct, plural
from interference.studies.pairs.cases import CASES
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.section.data import CASE_COLOR, CASE_NAME, CV_FLAG, RESOURCE_TITLE, PairsData


class Results:
    """The results per resource and microservice: tables, bars of means, IR bars, IR heat map."""

    def __init__(self, data: PairsData):
        self.data = data

    def stats_rows(self, target: str, metric: str, host: str, runtime: str) -> pd.DataFrame:
        return self.data.sort_rows(
            self.data.of_setup(self.data.summary, host, runtime, target=target, metric=metric)
        )

    def result_table(self, target: str, metric: str, host: str, runtime: str) -> Block:
        d = self.stats_rows(target, metric, host, runtime)
        rows, flags = [], []
        for _, r in d.iterrows():
            rows.append(
                [CASE_NAME.get(r["case"], r["case"]), self.data.label(r["target"], r["partner"])]
                + [num(r[c]) for c in ("mean", "median", "trimmed_mean", "max", "min", "sd")]
                + [num(r["cv"], 3), num(r["n"], 0)]
            )
            flags.append(is_num(r["cv"]) and r["cv"] > CV_FLAG)
        n_flag = sum(flags)
        limit = pct(CV_FLAG, 0, sign=False)
        note = (
            f"Shaded CV: above {limit} ({plural(n_flag, 'group')}). " if n_flag else f"No CV above {limit}. "
        ) + "Tr. Mean: mean of the values between the 10th and 90th percentile; n: samples counted."
        hib = "higher" if self.data.higher_is_better(target, metric) else "lower"
        setup = self.data.setup_suffix(host, runtime, ", {}")
        return self.data.table(
            ["", "", "Mean", "Median", "Tr. Mean", "Max", "Min", "SD", "CV", "n"],
            rows,
            f"{esc(self.data.metric_title(target, metric))} result ({esc(self.data.unit_of(target, metric))}, {hib} is "
            f"better){esc(setup)}.",
            group_first=True,
            numeric_from=2,
            cell_class=lambda i, j: "flag-cell" if j == 8 and flags[i] else "",
            notes=note,
        )

    @staticmethod
    def _groups(d: pd.DataFrame, value, low, high, label, scale: float = 1.0) -> list[Group]:
        """One bar group per case present (in the papers' order), bars in the rows' order."""
        out = []
        for c in [c for c in CASES if c in set(d["case"])]:
            part = d[d["case"] == c]
            out.append(Group(CASE_NAME[c], CASE_COLOR[c], [label(r) for _, r in part.iterrows()],
                             list(part[value] * scale), list(part[low] * scale), list(part[high] * scale)))  # fmt: skip
        return out

    def means_figure(self, target: str, host: str, runtime: str) -> Block | None:
        metrics = self.data.metrics_of(target)
        if not metrics:
            return None
        panels = []
        for metric in metrics:
            d = self.stats_rows(target, metric, host, runtime)
            base = d.loc[d["case"] == "1", "mean"]
            panels.append(Panel(
                self.data.metric_title(target, metric), f"{metric.replace('_', ' ')} ({self.data.unit_of(target, metric)})",
                self._groups(d, "mean", "ci_low", "ci_high", lambda r: f"+{r['partner']}" if isinstance(r["partner"], str) and r["partner"] else target),
                baseline=float(base.iloc[0]) if len(base) and is_num(base.iloc[0]) else None,
            ))  # fmt: skip
        hib = "higher" if self.data.higher_is_better(target, metrics[0]) else "lower"
        caption = (
            f"Mean performance of {esc(self.data.name(target))} ({esc(target)}){esc(self.data.setup_suffix(host, runtime))} "
            f"per case and partner (“+S”: measured beside S; {hib} is better). Error bars: 95 % confidence "
            f"interval of the mean; dashed line: the Case 1 baseline."
        )
        return self.data.figure(
            means_figure(panels),
            caption,
            alt=f"Bar chart of {self.data.name(target)} mean per case and partner",
        )

    def ir_figure(self, target: str, host: str, runtime: str) -> Block | None:
        ir = self.data.of_setup(self.data.ir, host, runtime, target=target)
        if ir.empty:
            return None
        panels = [
            Panel(self.data.metric_title(target, metric), "IR (% of baseline)",
                  self._groups(self.data.sort_rows(ir[ir["metric"] == metric]), "ir", "ir_ci_low", "ir_ci_high",
                               lambda r: f"+{r['partner']}", scale=100))
            for metric in self.data.metrics_of(target) if metric in set(ir["metric"])
        ]  # fmt: skip
        caption = (
            f"Interference ratio of {esc(self.data.name(target))} ({esc(target)}){esc(self.data.setup_suffix(host, runtime))} "
            f"beside each partner, per case, in percent of its Case 1 baseline: IR = (μ<sub>i</sub> − μ)/μ, sign "
            f"reversed when lower is better; below zero = degradation. Error bars: 95 % bootstrap interval; "
            f"“no data”: no valid sample (see Data quality)."
        )
        alt = f"Bar chart of {self.data.name(target)} interference ratios per case and partner"
        return self.data.figure(ir_figure(panels), caption, alt=alt)

    def ir_sentence(self, target: str, host: str, runtime: str) -> str:
        ir = self.data.of_setup(self.data.ir, host, runtime, target=target).dropna(subset=["ir"])
        out = []
        for metric in [m for m in self.data.metrics_of(target) if m in set(ir["metric"])]:
            d = ir[ir["metric"] == metric].sort_values("ir")
            worst, best = d.iloc[0], d.iloc[-1]
            s = (
                f"**{metric.replace('_', ' ')}** (baseline {num(d['baseline_mean'].iloc[0])} {d['unit'].iloc[0]}): "
                f"worst {CASE_NAME[worst['case']]} {self.data.label(target, worst['partner'])} at {pct(worst['ir'])}"
            )
            if len(d) > 1:
                s += f", best {CASE_NAME[best['case']]} {self.data.label(target, best['partner'])} at {pct(best['ir'])}"
            # No mean over the partners here: the Findings section's pooled mean is the one estimate.
            out.append(s + ".")
        return "\n".join(f"- {x}" for x in out)

    def results_blocks(self) -> list[Block]:
        blocks = []
        for res in self.data.resources_present():
            blocks.append(md(f"### {RESOURCE_TITLE.get(res, res)}"))
            for t in [t for t in self.data.targets() if self.data.resource(t) == res]:
                d = self.data.ms.get(t, {})
                paper = f" (the papers: {d.get('paper_tool')})." if d.get("paper_tool") else "."
                blocks.append(md(f"#### {self.data.name(t)} ({t})\n\nTool: {d.get('tool', '?')}{paper}"))
                for host, runtime in self.data.setups():
                    if self.data.of_setup(self.data.summary, host, runtime, target=t).empty:
                        continue
                    if self.data.many_setups():
                        blocks.append(md(f"##### {self.data.setup_name(host, runtime)}"))
                    sentence = self.ir_sentence(t, host, runtime)
                    if sentence:
                        blocks.append(
                            md("Interference against the Case 1 baseline (IR in percent):\n\n" + sentence)
                        )
                    blocks += [
                        self.result_table(t, metric, host, runtime) for metric in self.data.metrics_of(t)
                    ]
                    blocks += [
                        f
                        for f in (self.means_figure(t, host, runtime), self.ir_figure(t, host, runtime))
                        if f
                    ]
        return blocks

    def heatmap_blocks(self) -> list[Block]:
        if self.data.ir.empty:
            return [md("No interference ratios were computed (no concurrent case in the data).")]
        blocks = []
        for host, runtime in self.data.setups():
            d = self.data.of_setup(self.data.ir, host, runtime)
            if d.empty:
                continue
            rows = [(t, m) for t in self.data.targets() for m in self.data.metrics_of(t)
                    if ((d["target"] == t) & (d["metric"] == m)).any()]  # fmt: skip
            partners = [p for p in self.data.order() if p in set(d["partner"])]
            cases = [c for c in CONCURRENT if c in set(d["case"])]
            key = {(r["case"], r["target"], r["metric"], r["partner"]): r["ir"] for _, r in d.iterrows()}
            vals = np.array([[[key.get((c, t, m, p), np.nan) * 100 for p in partners] for t, m in rows]
                             for c in cases], dtype=float)  # fmt: skip
            fig = heatmap_figure(
                vals,
                [(CASE_NAME[c], CASE_COLOR[c]) for c in cases],
                [f"{t} {m.replace('_', ' ')}" for t, m in rows],
                [f"+{p}" for p in partners],
                ylabel="target and metric",
                xlabel="partner (the co-located microservice)",
                colorbar_label="IR (% of baseline; < 0 = degradation)",
            )
            blocks.append(
                self.data.figure(
                    fig,
                    f"Interference heat map{esc(self.data.setup_suffix(host, runtime))}: IR in percent of the target's "
                    "Case 1 baseline, target × partner, one panel per case. Red: the target loses performance "
                    "beside the partner; blue: it gains; grey: not measured.",
                    alt="Heat map of interference ratios, target by partner, one panel per case",
                )
            )
        return blocks
