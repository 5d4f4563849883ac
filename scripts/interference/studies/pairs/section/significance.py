"""Statistical tests: the two-way ANOVA (case × partner) per target and metric with partial η²
and Kruskal–Wallis where residuals are not normal, and Tukey HSD between the cases; each family
summarised in a generated sentence."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import and_list, cap, esc, is_num, num, p_str, sci
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.cases import PAPERS_COMPARISONS
from interference.studies.pairs.section.data import CASE_NAME, ETA_BANDS, PairsData, eta_band
from interference.studies.pairs.statistics import ALPHA  # the tests' level: 1 - the CIs' confidence

TERM_NAMES = {"case": "placement (case)", "partner": "the partner", "case:partner": "their interaction"}
COMPARISONS = list(PAPERS_COMPARISONS)


def _significant(p) -> bool:
    return is_num(p) and p < ALPHA


class Significance:
    """ANOVA and Tukey HSD tables with their generated sentences."""

    def __init__(self, data: PairsData):
        self.data = data

    def anova_sentence(self, fam: pd.DataFrame) -> str:
        title = f"**{fam['metric'].iloc[0].replace('_', ' ')}.**"
        method = fam["method"].iloc[0]
        if method == "not_testable":
            return f"{title} Not testable: {fam['note'].iloc[0] or 'too few samples'}."
        terms = fam[(fam["method"] != "kruskal") & (fam["term"] != "Residual")].copy()
        resid = fam[fam["term"] == "Residual"]
        df_res = int(resid["df"].iloc[0]) if len(resid) else None

        def name(term):
            return TERM_NAMES.get(term, term)

        def test(r):
            return f"F({num(r['df'], 0)}, {df_res}) = {num(r['F'])}, {p_str(r['p'])}"

        sig = terms[terms["p"] < ALPHA].sort_values("partial_eta_sq", ascending=False)
        if sig.empty:
            top = terms.sort_values("partial_eta_sq", ascending=False).iloc[0]
            s = (
                f"{title} Neither factor changes it significantly at α = {ALPHA:g}: the largest effect is "
                f"{name(top['term'])} with partial η² = {num(top['partial_eta_sq'], 3)} ({test(top)})."
            )
        else:
            first = sig.iloc[0]
            s = (
                f"{title} {cap(name(first['term']))} matters most: partial η² = "
                f"{num(first['partial_eta_sq'], 3)}, a {eta_band(first['partial_eta_sq'])} effect ({test(first)})."
            )
            rest = [
                f"{name(r['term'])}: partial η² = {num(r['partial_eta_sq'], 3)} ({eta_band(r['partial_eta_sq'])}, "
                f"{p_str(r['p'])}{'' if r['p'] < ALPHA else ', not significant'})"
                for _, r in terms.iterrows()
                if r["term"] != first["term"]
            ]
            if rest:
                s += " " + cap("; ".join(rest)) + "."
        kw = fam[fam["method"] == "kruskal"]
        if len(kw):
            k = kw.iloc[0]
            agrees = (k["p"] < ALPHA) == bool(((terms["term"] == k["term"]) & (terms["p"] < ALPHA)).any())
            s += (
                f" The residuals are not normal (Shapiro–Wilk {p_str(k['shapiro_p'])}), so the rank-based "
                f"Kruskal–Wallis test on {k['term']} is given too: H({num(k['df'], 0)}) = {num(k['F'])}, "
                f"{p_str(k['p'])}, which {'agrees' if agrees else 'disagrees'} with the ANOVA."
            )
        note = fam["note"].iloc[0] if "note" in fam else ""
        if method != "anova2" and note:
            s += f" (Model: {method.replace('_', ' ')}; {note}.)"
        return s

    def anova_blocks(self) -> list[Block]:
        a = self.data.anova
        if a.empty:
            return [md("No ANOVA results.")]
        blocks = [
            md(
                f"Per target and metric, a two-way ANOVA of the concurrent cases (2, 3a, 3b) with the factors "
                f"placement (case) and partner. Partial η² is the share of the variance a factor explains "
                f"beside the residual; the bands are Cohen's (small from {ETA_BANDS[2][0]:g}, medium from "
                f"{ETA_BANDS[1][0]:g}, large from {ETA_BANDS[0][0]:g}); significance at α = {ALPHA:g}."
            )
        ]
        for host, runtime in self.data.setups():
            for t in self.data.targets():
                fam_all = self.data.of_setup(a, host, runtime, target=t)
                if fam_all.empty:
                    continue
                rows, sentences, sig = [], [], set()
                for metric in self.data.metrics_of(t):
                    fam = fam_all[fam_all["metric"] == metric]
                    if fam.empty:
                        continue
                    sentences.append(self.anova_sentence(fam))
                    for _, r in fam.iterrows():
                        method = (
                            "Kruskal–Wallis (H)"
                            if r["method"] == "kruskal"
                            else r["method"].replace("_", " ")
                        )
                        if _significant(r["p"]):
                            sig.add(len(rows))
                        eta = r["partial_eta_sq"]
                        rows.append([metric, r["term"] or "–", method, num(r["df"], 0), sci(r["sum_sq"]), num(r["F"]),
                                     p_str(r["p"]).replace("p ", "").replace("= ", ""), num(eta, 3),
                                     eta_band(eta) if is_num(eta) else ""])  # fmt: skip
                setup = self.data.setup_suffix(host, runtime)
                blocks.append(
                    md(f"#### {self.data.name(t)} ({t}){setup}\n\n" + "\n".join(f"- {x}" for x in sentences))
                )
                blocks.append(
                    self.data.table(
                        ["Metric", "Term", "Method", "df", "Sum sq.", "F (H)", "p", "Partial η²", "Effect"],
                        rows,
                        f"ANOVA of {esc(self.data.name(t))} over Cases 2, 3a and 3b{esc(setup)}: value ~ case × partner.",
                        group_first=True,
                        numeric_from=3,
                        cell_class=lambda i, j, s=sig: "sig-cell" if j == 6 and i in s else "",
                        notes=f"Bold p: significant at α = {ALPHA:g}.",
                    )
                )
        return blocks

    def posthoc_sentence(self, d: pd.DataFrame, target: str, partner: str) -> str:
        """Which cases differ from the baseline, over the target's metrics (d: one partner)."""
        lab = self.data.label(target, partner)
        d = d[d["group1"] != ""]
        if d.empty:
            return f"{lab}: no comparison possible."
        n = d["metric"].nunique()
        base = d[d["group1"] == "1"]
        by_case = {}
        for c in [c for c in CONCURRENT if c in set(base["group2"])]:
            x = base[base["group2"] == c]
            by_case[c] = (int(x["reject"].sum()), len(x), x["p_adj"].min())
        always = [c for c, (k, m, _) in by_case.items() if k == m]
        never = [c for c, (k, m, _) in by_case.items() if k == 0]
        parts = []
        if always:
            verb = "differs" if len(always) == 1 else "differ"
            scope = " in every metric" if n > 1 else ""
            parts.append(f"{and_list(CASE_NAME[c] for c in always)} {verb} from the baseline{scope}")
        for c in [c for c in by_case if c not in always and c not in never]:
            k, m, _ = by_case[c]
            parts.append(f"{CASE_NAME[c]} in {k} of {m} metrics")
        if never and n == 1:
            listed = and_list(f"{CASE_NAME[c]} ({p_str(by_case[c][2])})" for c in never)
            parts.append(f"{listed} {'does' if len(never) == 1 else 'do'} not")
        elif never:
            parts.append(f"{and_list(CASE_NAME[c] for c in never)} in none")
        s = f"{lab}: " + "; ".join(parts) + "."
        conc = d[d["group1"] != "1"]
        if len(conc):
            s += f" Between concurrent cases, {int(conc['reject'].sum())} of {len(conc)} comparisons differ"
            s += "." if n == 1 else f" (over {n} metrics)."
        return s

    def posthoc_rows(self, d_t: pd.DataFrame, target: str, present: list) -> tuple[list, set]:
        """Table rows (metric, target(+partner), one cell per comparison) and the significant cells."""
        rows, sig = [], set()
        partners = [x for x in self.data.order() if x in set(d_t["partner"])]
        for metric in self.data.metrics_of(target):
            for partner in partners:
                d = d_t[(d_t["metric"] == metric) & (d_t["partner"] == partner)]
                if d.empty:
                    continue
                row = [metric, self.data.label(target, partner)]
                for j, (g1, g2) in enumerate(present):
                    x = d[(d["group1"] == g1) & (d["group2"] == g2)]
                    if x.empty:
                        row.append("–")
                        continue
                    x = x.iloc[0]
                    row.append(
                        (
                            "html",
                            f"{esc(num(x['meandiff']))}<br><span class='muted'>{esc(p_str(x['p_adj']))}</span>",
                        )
                    )
                    if x["reject"]:
                        sig.add((len(rows), j + 2))
                rows.append(row)
        return rows, sig

    def posthoc_blocks(self) -> list[Block]:
        p = self.data.posthoc
        if p.empty:
            return [md("No post hoc results.")]
        blocks = [
            md(
                f"Tukey HSD between the cases, per target, metric and partner (Case 1 is the target's baseline; "
                f"family-wise α = {ALPHA:g}). Each cell: the difference of means (column case minus row case) "
                f"and its adjusted p; shaded: significant."
            )
        ]
        for host, runtime in self.data.setups():
            for t in self.data.targets():
                d_t = self.data.of_setup(p, host, runtime, target=t)
                if d_t.empty:
                    continue
                present = [
                    c for c in COMPARISONS if ((d_t["group1"] == c[0]) & (d_t["group2"] == c[1])).any()
                ]
                rows, sig = self.posthoc_rows(d_t, t, present)
                if not rows:
                    continue
                sentences = [
                    self.posthoc_sentence(d_t[d_t["partner"] == partner], t, partner)
                    for partner in [x for x in self.data.order() if x in set(d_t["partner"])]
                ]
                unit_note = ", ".join(f"{m}: {self.data.unit_of(t, m)}" for m in self.data.metrics_of(t))
                setup = self.data.setup_suffix(host, runtime)
                blocks.append(
                    md(f"#### {self.data.name(t)} ({t}){setup}\n\n" + "\n".join(f"- {x}" for x in sentences))
                )
                blocks.append(
                    self.data.table(
                        ["Metric", "Target(+partner)"]
                        + [f"{CASE_NAME[b]} − {CASE_NAME[a]}" for a, b in present],
                        rows,
                        f"Tukey HSD of {esc(self.data.name(t))}{esc(setup)}: differences of means ({esc(unit_note)}).",
                        group_first=True,
                        numeric_from=2,
                        table_class="rpt-table rpt-small",
                        cell_class=lambda i, j, s=sig: "sig-cell" if (i, j) in s else "",
                    )
                )
        return blocks
