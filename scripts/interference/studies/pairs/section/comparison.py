"""The comparison with the published results, from results/stats/pairs/published.tsv (written by
studies/pairs/published.py): a generated summary, each published IR beside ours with its verdict,
a scatter of the two, and the papers' means beside ours for scale."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.blocks import Block, appendix, md
from interference.rendering.kit.figures.scatter import MARKERS, Point, comparison_scatter
from interference.rendering.kit.format import cap, esc, is_num, num, pct
from interference.rendering.kit.format import signed as ir_str
from interference.studies.pairs.cases import CASES
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.section.data import CASE_COLOR, CASE_NAME, PairsData
from interference.studies.pairs.statistics.published import NEGLIGIBLE_IR, SIMILAR_FACTOR


class Comparison:
    """The published values beside ours."""

    def __init__(self, data: PairsData):
        self.data = data

    def _sorted(self, d: pd.DataFrame, target_key, partner_missing: int) -> pd.DataFrame:
        pos = {x: i for i, x in enumerate(self.data.order())}
        d = d.assign(
            _o=d["case"].map({c: i for i, c in enumerate(CASES)}),
            _t=d["target"].map(target_key),
            _p=d["partner"].map(lambda x: pos.get(x, 99) if x else partner_missing),
        )
        return d.sort_values(["paper", "_t", "metric", "_o", "_p"], kind="stable").drop(
            columns=["_o", "_t", "_p"]
        )

    def published_irs(self) -> pd.DataFrame:
        """The published IRs beside ours (rows of published.tsv with comparison "ir")."""
        c = self.data.published[self.data.published["comparison"] == "ir"]
        pos = {x: i for i, x in enumerate(self.data.order())}
        return self._sorted(c, lambda x: pos.get(x, 99), 99).reset_index(drop=True)

    def published_means(self) -> pd.DataFrame:
        m = self.data.published[self.data.published["comparison"] == "mean"]
        return self._sorted(m, lambda x: x, -1).reset_index(drop=True)

    def has_published(self) -> bool:
        d = self.data.doc.published_dir
        return bool(d and d.exists() and any(d.glob("*.tsv"))) or len(self.data.published) > 0

    def comparison_blocks(self) -> list[Block]:
        if not self.has_published():
            return [
                md(
                    "The published tables (report/published/means.tsv and interference_ratios.tsv) are not "
                    "available, so there is nothing to compare with yet."
                )
            ]
        c = self.published_irs()
        if c.empty:
            return [
                md(
                    "None of the published combinations (case, target, partner, metric) was measured in this run."
                )
            ]
        rows, cls = [], {}
        for i, (_, r) in enumerate(c.iterrows()):
            ci = f"[{ir_str(r['ir_ci_low'])}, {ir_str(r['ir_ci_high'])}]" if is_num(r["ir_ci_low"]) else "–"
            rows.append([
                f"{r['paper']}, {r['source']}" + ("*" if r["ir_from"] == "the paper's means" else ""),
                CASE_NAME.get(r["case"], r["case"]),
                self.data.label(r["target"], r["partner"]) + self.data.setup_suffix(r["host"], r["runtime"]),
                r["metric"], ir_str(r["paper_ir"]), ir_str(r["ir"]), ci, "yes" if r["in_ci"] else "no", r["verdict"],
            ])  # fmt: skip
            cls[i] = "agree-cell" if r["direction_agrees"] else "flag-cell"
        table = (
            self.data.table(
                ["Paper, source", "Case", "Target(+partner)", "Metric", "IR paper", "IR here", "95 % CI here",
                 "Paper in CI", "Verdict"],
                rows,
                "The papers' interference ratios beside this machine's. Direction: |IR| below "
                f"{NEGLIGIBLE_IR:g} counts as no interference; “similar size”: same sign and within a factor "
                f"{SIMILAR_FACTOR:g}. * IR computed from the paper's means (no IR printed).",
                numeric_from=4,
                text_cols=(8,),
                cell_class=lambda i, j: cls[i] if j == 8 else "",
                table_class="rpt-table rpt-small",
            )
        )  # fmt: skip
        # The answer and its figure first; the row-by-row tables folded (a reader opens them).
        f = self.comparison_figure(c)
        return [md(self.comparison_summary(c)), *([f] if f else [])] + appendix(
            f"The {len(c)} published interference ratios beside ours, and the means, row by row",
            [table, *self.means_comparison_blocks()],
        )

    def comparison_summary(self, c: pd.DataFrame) -> str:
        n = len(c)
        agree = int(c["direction_agrees"].sum())
        similar = int(c["verdict"].isin(["same sign, similar size", "both negligible"]).sum())
        fid = self.data.fidelity
        lines = []
        if len(fid):
            # The headline is the fidelity table's (one rule: the abstract and Findings say the same).
            pairings, agree_p = int(fid["pairings"].sum()), int(fid["agree"].sum())
            lines.append(
                f"**This machine reproduces the direction of {agree_p} of the papers' {pairings} pairings "
                f"({pct(agree_p / pairings, 0, sign=False)})** (a {esc(fid['rule'].iloc[0])}; "
                "results/stats/pairs/fidelity.tsv)."
            )
        lines.append(
            f"Metric by metric (the table below): {agree} of {n} interference ratios have the paper's direction "
            f"(gain, loss, or none within ±{NEGLIGIBLE_IR:g}); {similar} are also of similar size (within a factor "
            f"{SIMILAR_FACTOR:g}), and for {int(c['in_ci'].sum())} the paper's value lies inside this run's 95 % "
            "interval."
        )
        by = c.groupby("target")["direction_agrees"].agg(["sum", "count"])
        lines.append(
            "By target: "
            + "; ".join(f"{self.data.name(t)} {int(by.loc[t, 'sum'])}/{int(by.loc[t, 'count'])}" for t in self.data.order()
                        if t in by.index)
            + "."
        )  # fmt: skip
        # The papers' research questions, asked of their numbers and ours (case_contrasts.tsv).
        for a, b, what in (
            ("2", "3a", "intra-container (Case 2) against inter-container (Case 3a)"),
            ("3b", "3a", "with cgroup limits (Case 3b) against without (Case 3a)"),
        ):
            k = self.data.case_contrasts
            k = k[(k["case"] == a) & (k["against"] == b)]
            if len(k):
                lines.append(
                    f"{cap(what)}: the papers have Case {a} worse in {int(k['paper_worse'].sum())} of {len(k)} "
                    f"combinations, this machine in {int(k['worse'].sum())}; the two agree on "
                    f"{int(k['agrees'].sum())} of {len(k)}."
                )
        worst = self.worst_placements()
        if worst:
            lines.append("Worst placements:\n" + "\n".join(f"    - {cap(w)}." for w in worst))
        bad = c[~c["direction_agrees"]]
        if len(bad):
            shown = bad.head(6)
            lines.append(
                "Not reproduced: "
                + "; ".join(
                    f"{CASE_NAME[r['case']]} {self.data.label(r['target'], r['partner'])} {r['metric']} "
                    f"({r['paper']}: {ir_str(r['paper_ir'])}, here {ir_str(r['ir'])})"
                    for _, r in shown.iterrows()
                )
                + (f"; and {len(bad) - len(shown)} more (table below)." if len(bad) > len(shown) else ".")
            )
        return lines[0] + "\n\n" + "\n".join(f"- {x}" for x in lines[1:])

    def worst_placements(self) -> list[str]:
        """Per paper, target and metric: is the paper's worst combination the worst here too
        (worst_placements.tsv)?"""
        out = []
        for _, r in self.data.worst_placements.iterrows():
            paper = r["paper"]
            if self.data.many_setups():
                paper = f"{paper} vs {self.data.setup_name(r['host'], r['runtime'])}"
            lab = f"{CASE_NAME[r['paper_case']]} {self.data.label(r['target'], r['paper_partner'])}"
            head = f"{paper}: the worst {self.data.metric_title(r['target'], r['metric'])} combination"
            if r["same"]:
                out.append(
                    f"{head}, {lab} ({ir_str(r['paper_ir'])}), is the worst here too ({ir_str(r['ir'])})"
                )
            else:
                here = (
                    f"{CASE_NAME[r['case']]} {self.data.label(r['target'], r['partner'])} ({ir_str(r['ir'])})"
                )
                out.append(f"{head} is {lab} ({ir_str(r['paper_ir'])}); here it is {here}")
        return out

    def comparison_figure(self, c: pd.DataFrame) -> Block | None:
        if len(c) < 2:
            return None
        markers = dict(zip(self.data.order(), MARKERS))
        points = [
            Point(r["paper_ir"] * 100, r["ir"] * 100, r["ir_ci_low"] * 100, r["ir_ci_high"] * 100,
                  CASE_COLOR.get(r["case"], "#333333"), markers.get(r["target"], "o"))
            for _, r in c.iterrows()
        ]  # fmt: skip
        fig = comparison_scatter(
            points,
            NEGLIGIBLE_IR * 100,
            [(CASE_NAME[k], CASE_COLOR[k]) for k in CONCURRENT if k in set(c["case"])],
            [
                (f"{t} ({self.data.name(t)})", markers.get(t, "o"))
                for t in self.data.order()
                if t in set(c["target"])
            ],
            "IR in the paper (% of its baseline)",
            "IR on this machine (% of its baseline)",
        )
        return self.data.figure(
            fig,
            "Published against reproduced interference ratios, one point per combination (error bars: this run's "
            "95 % interval). On the dashed diagonal the two agree; in the lower-left and upper-right quadrants they "
            f"have the same sign; the grey bands mark |IR| < {NEGLIGIBLE_IR:g}.",
            alt="Scatter plot of published against reproduced interference ratios",
        )

    def means_comparison_blocks(self) -> list[Block]:
        j = self.published_means()
        if j.empty:
            return []
        rows = []
        for _, r in j.iterrows():
            converted = is_num(r["paper_mean"]) or not is_num(r["paper_mean_printed"])
            cv = "–"
            if is_num(r["paper_cv"]):
                cv = num(r["paper_cv"], 3) + ("*" if r["paper_cv_from"] == "sd/mean" else "")
            rows.append([
                f"{r['paper']}, {r['source']}", CASE_NAME.get(r["case"], r["case"]),
                self.data.label(r["target"], r["partner"]), f"{r['metric']} ({r['unit']})",
                num(r["paper_mean"]) if converted else f"{num(r['paper_mean_printed'])} {r['paper_unit']}",
                num(r["mean"]), num(r["here_over_paper"], 2), cv, num(r["cv"], 3),
            ])  # fmt: skip
        return [
            md(
                "The absolute values depend on the hardware and the workload sizes, so the means are shown "
                "for scale only; the interference ratios above are the comparable quantity. This machine: "
                f"{self.data.doc.host_line()}."
            ),
            self.data.table(
                ["Paper, source", "Case", "Target(+partner)", "Metric (unit here)", "Mean paper", "Mean here",
                 "Here / paper", "CV paper", "CV here"],
                rows,
                "The papers' means beside this machine's (the papers' values converted to this run's unit where "
                "the units differ). * CV computed from the paper's SD and mean (no CV printed).",
                numeric_from=4,
                table_class="rpt-table rpt-small",
            ),
        ]  # fmt: skip
