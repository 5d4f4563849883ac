"""How often our IRs go the papers' way: results/stats/pairs/fidelity.tsv, our own fidelity
target (not a finding of any paper), read by the abstract and the Findings section alike.

One rule: a pairing (host, runtime, case, target, partner) is one unit, its metrics (STREAM's
four kernels, Bonnie++'s four tests) averaged first on both sides, so that correlated metrics
count once; its direction is gain, loss or none (|IR| < NEGLIGIBLE_IR, published.py), and it
agrees when the paper's and ours are the same. Per paper: the pairings compared, how many agree,
the share with its Wilson 95 % interval (the pairings as units), and the pairings that disagree."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from interference.stats.descriptive import CONFIDENCE
from interference.studies.pairs import schemas
from interference.studies.pairs.statistics.published import NEGLIGIBLE_IR, direction, read

PAIRING = ["host", "runtime", "case", "target", "partner"]
COLUMNS = schemas.FIDELITY.columns  # declared with their kinds in ../schemas.py
RULE = f"pairing (its metrics averaged) agrees when both gain, both lose or both change by less than {NEGLIGIBLE_IR:.0%}"


def fidelity_table(published: pd.DataFrame) -> pd.DataFrame:
    """One row per paper with published IRs of pairings measured here (COLUMNS)."""
    ir = published[(published["comparison"] == "ir") & published["ir"].notna()]
    if ir.empty:
        return pd.DataFrame(columns=COLUMNS)
    per = ir.groupby(["paper", *PAIRING], as_index=False)[["paper_ir", "ir"]].mean()
    per["agrees"] = per["paper_ir"].map(direction) == per["ir"].map(direction)
    rows = []
    for paper, g in per.groupby("paper", sort=True):
        agree = int(g["agrees"].sum())
        low, high = proportion_confint(agree, len(g), alpha=1 - CONFIDENCE, method="wilson")
        off = g[~g["agrees"]]
        rows.append({
            "paper": paper, "pairings": len(g), "agree": agree, "share": agree / len(g),
            "ci_low": float(low), "ci_high": float(high), "rule": RULE,
            "disagreements": "; ".join(
                f"Case {r.case} {r.target} beside {r.partner or 'nothing'}: paper {r.paper_ir:+.1%}, ours {r.ir:+.1%}"
                for r in off.itertuples(index=False)
            ),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def fidelity(inputs: dict[str, Path], jobs: int = 1) -> pd.DataFrame:
    return fidelity_table(read(inputs["published"]))
