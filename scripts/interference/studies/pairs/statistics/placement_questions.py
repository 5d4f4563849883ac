"""The papers' placement questions, asked of their numbers and of ours (from published.tsv's IR
rows), so that the pair section only shows rows and counts them:

  case_contrasts.tsv    per combination measured in both cases of a contrast (Case 2 against 3a:
                        one container or two; 3b against 3a: limits or none), which case is
                        worse by the papers' IRs and by ours (a difference below NEGLIGIBLE_IR is
                        neither), and whether the two agree
  worst_placements.tsv  per paper, target and metric with two or more combinations: the papers'
                        worst (case, partner) and ours, and whether they are the same"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from interference.studies.pairs import schemas
from interference.studies.pairs.statistics.published import direction, read

# (worse?, better?) cases, as the papers asked: intra- against inter-container, limits or none.
CONTRASTS = (("2", "3a"), ("3b", "3a"))
COMBINATION = ["paper", "host", "runtime", "target", "partner", "metric"]
PLACEMENT_FAMILY = ["paper", "host", "runtime", "target", "metric"]


def _irs(published: pd.DataFrame) -> pd.DataFrame:
    return published[published["comparison"] == "ir"]


def case_contrasts_table(published: pd.DataFrame) -> pd.DataFrame:
    """One row per contrast and combination in both of its cases (schemas.CASE_CONTRASTS)."""
    c, rows = _irs(published), []
    for a, b in CONTRASTS:
        x = c[c["case"] == a].set_index(COMBINATION)
        y = c[c["case"] == b].set_index(COMBINATION)
        for key in x.index.intersection(y.index):
            paper = x.loc[key, "paper_ir"] - y.loc[key, "paper_ir"]
            ours = x.loc[key, "ir"] - y.loc[key, "ir"]
            rows.append({
                **dict(zip(COMBINATION, key)), "case": a, "against": b,
                "paper_difference": paper, "difference": ours,
                "paper_worse": direction(paper) < 0, "worse": direction(ours) < 0,
                "agrees": direction(paper) == direction(ours),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=schemas.CASE_CONTRASTS.columns)


def worst_placements_table(published: pd.DataFrame) -> pd.DataFrame:
    """One row per paper, host, runtime, target and metric with two or more combinations: the
    lowest IR by the papers and by us (schemas.WORST_PLACEMENTS)."""
    rows = []
    for key, g in _irs(published).groupby(PLACEMENT_FAMILY, sort=True):
        if len(g) < 2 or g["ir"].isna().all():
            continue
        pw, ow = g.loc[g["paper_ir"].idxmin()], g.loc[g["ir"].idxmin()]
        rows.append({
            **dict(zip(PLACEMENT_FAMILY, key)), "combinations": len(g),
            "paper_case": pw["case"], "paper_partner": pw["partner"], "paper_ir": pw["paper_ir"],
            "case": ow["case"], "partner": ow["partner"], "ir": ow["ir"],
            "same": (pw["case"], pw["partner"]) == (ow["case"], ow["partner"]),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=schemas.WORST_PLACEMENTS.columns)


def case_contrasts(inputs: dict[str, Path], jobs: int = 1) -> pd.DataFrame:
    return case_contrasts_table(read(inputs["published"]))


def worst_placements(inputs: dict[str, Path], jobs: int = 1) -> pd.DataFrame:
    return worst_placements_table(read(inputs["published"]))
