"""The limit's effect and the partner's (results/stats/pairs/split.tsv): each Case 2/3a IR beside
the IR of Case 1u against Case 1 (the limits removed, no partner) and of the case against 1u
(the partner added, no limits either side), with a computed sentence on how often the two
point different ways."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, pct, plural
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import UNLIMITED, UNLIMITED_CASES
from interference.studies.pairs.section.data import CASE_NAME, STUDY, PairsData

NUMERIC = schemas.SPLIT.numeric


def _ir(r, effect: str) -> str:
    x, lo, hi = (r[f"{effect}_{c}"] for c in ("ir", "ci_low", "ci_high"))
    if pd.isna(x):
        return "–"
    return pct(x) + (f" [{pct(lo)}, {pct(hi)}]" if pd.notna(lo) else "")


class Split:
    """Each Case 2/3a IR split into the limit's effect and the partner's."""

    def __init__(self, data: PairsData):
        self.data = data

    def split_blocks(self) -> list[Block]:
        s = self.data.doc.stats.table(STUDY, "split", NUMERIC)
        if s.empty:
            return [md("No split of the IRs was computed (results/stats/pairs/split.tsv is missing).")]
        s = s[s["case"].isin(UNLIMITED_CASES)]
        have = s.dropna(subset=["limit_ir", "partner_ir"])
        if have.empty:
            return [md(f"This config has no Case {UNLIMITED} (each microservice alone without limits), so a "
                       f"Case 2 or 3a IR cannot be split into the limit's removal and the partner's arrival; "
                       f"add \"{UNLIMITED}\" to the pair study's `cases` for it.")]  # fmt: skip
        # The table's own words for where the parts pull against each other (limit_partner.opposed).
        counts = have["opposed"].fillna("").astype(str).value_counts() if "opposed" in have else {}
        opposed = [f"{n} show {esc(what)}" for what, n in sorted(counts.items()) if what]
        text = (
            f"Of {plural(len(have), 'unlimited concurrent cell')} with Case {UNLIMITED}, "
            + ("; ".join(opposed) if opposed else "none has parts that pull against each other")
            + "."
        )
        rows = [
            [CASE_NAME[r["case"]], self.data.label(r["target"], r["partner"]), r["metric"].replace("_", " "),
             _ir(r, "total"), _ir(r, "limit"), _ir(r, "partner")]
            for _, r in have.iterrows()
        ]  # fmt: skip
        return [
            md(text),
            self.data.table(
                [
                    "Case",
                    "Target (+partner)",
                    "Metric",
                    "IR against Case 1",
                    f"Limit: {UNLIMITED} against 1",
                    f"Partner: case against {UNLIMITED}",
                ],  # fmt: skip
                rows,
                "Each concurrent IR without limits split into the limit's effect and the partner's, with 95 % "
                "bootstrap intervals (results/stats/pairs/split.tsv).",
                group_first=True,
                numeric_from=3,
            ),
        ]
