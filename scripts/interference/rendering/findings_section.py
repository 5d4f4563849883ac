"""The report's Findings section, first in the paper: the scorecard (results/stats/findings.tsv)
as a forest plot of every scored finding against its claim's range, counts per paper, one row
per finding with the paper's figure, ours with the interval its verdict reads, the verdict, the
cells it holds in and why; then our fidelity to the papers' directions (each study's
fidelity.tsv, not a finding); and each study section's view of its own rows (study_blocks).
Every sentence is computed from those tables."""

from __future__ import annotations

import math

import pandas as pd

from interference.findings import verdict as v
from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import and_list, esc, is_num, num, pct, plural
from interference.stores.stats_tables import read_tsv

NUMERIC = ["expect_low", "expect_high", "published", "ours", "ci_low", "ci_high", "n", "cells", "tau2", "i2",
           "pred_low", "pred_high"]  # fmt: skip
FIDELITY_NUMERIC = ["pairings", "agree", "share", "ci_low", "ci_high"]
PAPERS = ("000", "001", "002", "003", "004")
# The forest plot's point colours (Dark2's green and orange, a grey): apart in greyscale too.
VERDICT_COLOR = {v.REPRODUCED: "#1b9e77", v.NOT_REPRODUCED: "#d95f02", v.INCONCLUSIVE: "#8c8c8c"}
# Each quantity's panel: its axis label, the factor to its unit, a log axis.
PANELS = {
    "ir": ("interference ratio (%)", 100.0, False),
    "share": ("share of cells inside the range (%)", 100.0, False),
    "ratio": ("ratio (×, log scale)", 1.0, True),
}
VERDICT_CLASS = {
    v.REPRODUCED: "agree-cell",
    v.NOT_REPRODUCED: "flag-cell",
    v.INCONCLUSIVE: "",
    v.NOT_TESTABLE: "muted-cell",
    v.NOT_RUN: "muted-cell",
}


def value(x, quantity: str) -> str:
    """A finding's quantity as the reader knows it: IRs and shares in %, ratios as ×."""
    if not is_num(x) or (isinstance(x, float) and math.isinf(x)):
        return "–"
    if quantity == "ratio":
        return f"{num(x, 2)}×"
    return pct(x, 1, sign=quantity == "ir")


def expected(r) -> str:
    """The claim's range: "< −5.0 %", "> 0.90×", "−5.0 % to +5.0 %"."""
    low, high, q = r["expect_low"], r["expect_high"], r["quantity"]
    if math.isinf(low):
        return f"< {value(high, q)}"
    if math.isinf(high):
        return f"> {value(low, q)}"
    return f"{value(low, q)} to {value(high, q)}"


def ours(r) -> str:
    if not is_num(r["ours"]):
        return "–"
    ci = (
        f" [{value(r['ci_low'], r['quantity'])}, {value(r['ci_high'], r['quantity'])}]"
        if is_num(r["ci_low"]) and is_num(r["ci_high"])
        else ""
    )
    return value(r["ours"], r["quantity"]) + ci


def why(r) -> tuple[str, str]:
    """The Why cell (HTML): what was measured, the verdict's reason, the cells it holds in, the
    heterogeneity of a pooled mean and what would settle an open one; the evidence from our data
    folded under it; the config that runs a finding not run here."""
    parts = [esc(p) for p in (r["what"], r["reason"]) if p]
    if r.get("holds_in"):
        parts.append(f"holds in {esc(r['holds_in'])}")
    if is_num(r.get("tau2")) and r["cells"] > 1:
        het = f"heterogeneity τ² = {num(r['tau2'], 4)}, I² = {pct(r['i2'], 0, sign=False)}"
        if is_num(r.get("pred_low")):
            het += (f", 95 % prediction interval for a new cell [{value(r['pred_low'], r['quantity'])}, "
                    f"{value(r['pred_high'], r['quantity'])}]")  # fmt: skip
        parts.append(het)
    if r.get("settle"):
        parts.append(f"to settle it: {esc(r['settle'])}")
    # The config that runs it, unless the plan's reason already says what would (a budget, a config).
    reason = str(r["reason"] or "")
    if r["verdict"] == v.NOT_RUN and r["config"] and "budget" not in reason and "run config/" not in reason:
        parts.append(f"run <code>{esc(r['config'])}</code>")
    text = "; ".join(parts)
    if r["evidence"]:
        items = "".join(f"<li>{esc(e)}</li>" for e in r["evidence"].split("; "))
        text += f"<details><summary>our data</summary><ul>{items}</ul></details>"
    return ("html", text)


def counts(df: pd.DataFrame) -> pd.DataFrame:
    """Findings per paper (rows) and verdict (columns)."""
    c = pd.crosstab(df["paper"], df["verdict"]).reindex(index=PAPERS, columns=list(v.VERDICTS), fill_value=0)
    return c[c.sum(axis=1) > 0]


def lead(df: pd.DataFrame) -> str:
    total = df["verdict"].value_counts()
    parts = [f"{total.get(name, 0)} {name}" for name in v.VERDICTS if total.get(name, 0)]
    papers = sorted(df["paper"].unique())
    return (
        f"This run scores {plural(len(df), 'published finding')} of {plural(len(papers), 'paper')} "
        f"({and_list(papers)}): {and_list(parts)}. A finding is a claim of a paper's abstract, "
        f"conclusions or results, turned into a range its quantity must lie in (the column "
        f"“claim's range”) and read with the paper's own quantifier: *every* cell, *most* cells "
        f"(more than half), *some* cell, the *mean* of the cells (their shared baselines in its "
        f"interval) or *about* a figure. Each decision is a one-sided test at {pct(v.ALPHA, 0, sign=False)}, "
        f"its level divided among the cells where the quantifier picks among them, so that "
        f"neither verdict is wrongly given more than {pct(v.ALPHA, 0, sign=False)} of the time; the "
        f"interval shown is the {pct(v.DECISION_CONFIDENCE, 0, sign=False)} one the test reads. It is "
        f"*{v.REPRODUCED}* or *{v.NOT_REPRODUCED}* when the tests decide, else *{v.INCONCLUSIVE}* "
        f"(also when its interval covers one run's iterations only, or, where its table does not say "
        f"what it covers, rests on fewer than {v.MIN_SAMPLES} samples a side), and then says how many "
        f"more runs would settle it. The table is "
        f"results/stats/findings.tsv."
    )


def fidelity(stats_dir) -> list[str]:
    """Our fidelity target, not a finding: its rule, then a sentence per paper of each study's
    fidelity.tsv (empty without one)."""
    out = []
    for path in sorted(stats_dir.glob("*/fidelity.tsv")):
        table = read_tsv(path, numeric=FIDELITY_NUMERIC)
        if len(table) and not out:
            out.append(f"One rule for the whole report: a {esc(table['rule'].iloc[0])}.")
        for r in table.itertuples(index=False):
            others = r.disagreements if isinstance(r.disagreements, str) else ""
            out.append(
                f"Paper {r.paper}: {int(r.agree)} of {plural(int(r.pairings), 'pairing')} in the paper's "
                f"direction, {value(r.share, 'share')} [{value(r.ci_low, 'share')}, {value(r.ci_high, 'share')}]"
                + (f"; the others: {esc(others)}" if others else "")
                + "."
            )
    return out


def plan_sentence(record: dict) -> str:
    """What the plan of findings (config findings_plan) ran and left out, and why."""
    if not record:
        return ""
    parts = {k: list(record.get(k) or ()) for k in ("planned", "over_budget", "elsewhere", "not_testable")}
    asked = sum(len(x) for x in parts.values())
    text = (
        f"**The plan.** The config asked for {plural(asked, 'finding')}; {len(parts['planned'])} were planned"
    )
    if record.get("budget_min") is not None:
        text += f" within its budget of {record['budget_min']:g} min (about {record['planned_min']:.0f} min by the models"
        text += f"; {esc(record['scale'])})" if record.get("scale") else ")"
    left = [
        (parts["over_budget"], "over the budget"),
        (parts["elsewhere"], "need another host or another definition of a study"),
        (parts["not_testable"], "need what this machine lacks"),
    ]
    said = [f"{len(ids)} {what} ({esc(', '.join(ids))})" for ids, what in left if ids]
    text += ("; " + "; ".join(said) if said else "") + ". Each row below says why."
    return text + pricing_sentence(record)


def pricing_sentence(record: dict) -> str:
    """How the plan priced the findings whose paper gives their cells (config decision_power)."""
    priced, power = record.get("priced") or {}, record.get("decision_power")
    if not priced or not power:
        return ""
    more = [f"{i} at {f:g} times" for i, (f, _) in priced.items() if f > 1 and i in record["planned"]]
    text = (
        f" It priced {plural(len(priced), 'finding')} by the runs a cell their verdict needs to reproduce the "
        f"paper's values with a probability of {power:g}"
        + (f" on the noise of {esc(record['noise_from'])}" if record.get("noise_from") else "")
        + (f" ({esc(and_list(more))} the config's runs)" if more else " (each at the config's runs)")
    )
    if undecided := record.get("undecided"):
        text += (f"; no factor up to {record.get('max_factor', 10):g} decides {esc(and_list(undecided))}, "
                 "so they came last")  # fmt: skip
    return text + " (docs/planning.md)."


def scorecard(doc) -> pd.DataFrame | None:
    """findings.tsv, read once per document (the abstract, this section and every study's
    section show it), or None without one."""
    if not hasattr(doc, "_scorecard"):
        path = doc.stats_dir / "findings.tsv"
        doc._scorecard = read_tsv(path, numeric=NUMERIC) if path.exists() else None
    return doc._scorecard


def answer(doc) -> str:
    """The abstract's first sentence: how the published findings fared here (findings.tsv), or
    nothing without a scorecard."""
    df = scorecard(doc)
    if df is None:
        return ""
    counts = df["verdict"].value_counts()
    scored = [f"{counts[name]} {name}" for name in VERDICT_COLOR if counts.get(name, 0)]
    left = len(df) - sum(counts.get(name, 0) for name in VERDICT_COLOR)
    text = (
        f"**Of the {plural(len(df), 'published finding')} of papers {and_list(sorted(df['paper'].unique()))}"
    )
    text += f", this run scored {and_list(scored)}**" if scored else ", this run scored none**"
    if left:
        text += f"; {left} {'was' if left == 1 else 'were'} not run or {'is' if left == 1 else 'are'} not testable here"
    return text + " (Findings, below)."


def forest_block(doc, df: pd.DataFrame) -> Block | None:
    """Every scored finding as a point with the interval its verdict reads, against its claim's
    range as a band, coloured by verdict, grouped by paper: one panel per quantity."""
    # Here, not at the top: the findings rule imports this module for its values, not matplotlib.
    from interference.rendering.kit.figures.forest import Panel, Row, forest

    scored = df[df["verdict"].isin(list(VERDICT_COLOR)) & df["ours"].map(is_num)]
    if scored.empty:
        return None
    panels = []
    for quantity, (label, unit, log) in PANELS.items():
        rows = [
            Row(r["id"], r["paper"], unit * r["ours"], unit * r["ci_low"], unit * r["ci_high"],
                unit * r["expect_low"], unit * r["expect_high"], VERDICT_COLOR[r["verdict"]])
            for _, r in scored[scored["quantity"] == quantity].iterrows()
        ]  # fmt: skip
        panels.append(Panel(label, rows, log))
    counts = scored["verdict"].value_counts()
    legend = [(f"{name} ({counts[name]})", c) for name, c in VERDICT_COLOR.items() if counts.get(name, 0)]
    caption = (
        f"The {plural(len(scored), 'scored finding')} of the table below: ours (a point) with the "
        f"{pct(v.DECISION_CONFIDENCE, 0, sign=False)} interval its verdict reads (a line), against the "
        "range its claim allows (the band; open where the claim has one edge), grouped by paper "
        "(the lines between rows). Findings not run or not testable here are left out."
    )
    return doc.figure(
        forest(panels, legend), caption, alt="Forest plot of the scored findings against their claims' ranges"
    )


def blocks(doc) -> list[Block]:
    out = [md("## Findings")]
    df = scorecard(doc)
    if df is None:
        return out + [md(f"No scorecard was given to this report ({esc(doc.stats_dir / 'findings.tsv')}).")]
    out.append(md(esc(lead(df))))
    if sentence := plan_sentence(doc.config.get("findings_plan") or {}):
        out.append(md(sentence))
    if (figure := forest_block(doc, df)) is not None:
        out.append(figure)
    c = counts(df)
    out.append(
        doc.table(
            [
                "Paper",
                *[n.replace(" in this config", "").replace(" on this machine", "") for n in c.columns],
                "All",
            ],
            [[p, *[int(x) for x in row], int(row.sum())] for p, row in c.iterrows()],
            "Findings per paper and verdict (results/stats/findings.tsv).",
        )
    )
    sentences = fidelity(doc.stats_dir)
    if sentences:
        out.append(md("**Our fidelity to the papers' directions** (our own target, not a finding). "
                      + " ".join(sentences)))  # fmt: skip
    rows = [
        [
            ("html", f'{esc(r["id"])}<br><span class="muted">{esc(r["source"])}</span>'),
            r["claim"],
            expected(r),
            value(r["published"], r["quantity"]) if is_num(r["published"]) else "–",
            ours(r),
            r["verdict"],
            why(r),
        ]
        for _, r in df.iterrows()
    ]
    classes = [VERDICT_CLASS.get(r["verdict"], "") for _, r in df.iterrows()]
    out.append(
        doc.table(
            [
                "Finding",
                "Claim (our words)",
                "Claim's range",
                "Published",
                f"Ours [{pct(v.DECISION_CONFIDENCE, 0, sign=False)} CI]",
                "Verdict",
                "Why",
            ],
            rows,
            "Every published finding of the five papers, scored on this run. Published: the paper's figure "
            "for the same quantity (stated in its text, or the mean of its tables' cells); – where it gives none.",
            numeric_from=2,
            text_cols=(1, 6),
            cell_class=lambda i, j: classes[i] if j == 5 else "",
            table_class="rpt-table rpt-findings",
        )
    )
    return out


def study_blocks(doc, study: str) -> list[Block]:
    """A study section's view of the published findings it tests: findings.tsv's rows of that study,
    as the findings step scored them (one judge for the whole report; nothing is judged here)."""
    df = scorecard(doc)
    if df is None or (df := df[df["study"] == study]).empty:
        return []
    lines = []
    for _, r in df.iterrows():
        paper = f"; paper {value(r['published'], r['quantity'])}" if is_num(r["published"]) else ""
        reason = f" ({esc(r['reason'])})" if r["reason"] else ""
        lines.append(
            f"- **{esc(r['id'])}** {esc(r['claim'])} Claim's range {expected(r)}{paper}; ours {ours(r)}: "
            f"*{esc(r['verdict'])}*{reason}."
        )
    return [md("The papers' findings this study tests, as the Findings section scores them "
               "(results/stats/findings.tsv):\n\n" + "\n".join(lines))]  # fmt: skip
