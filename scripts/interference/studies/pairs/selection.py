"""One reading of a finding's args for the pair study: which IR cells its check reads. The
scorer takes their rows (Selector.rows) and the planner the runs that make them (Selector.needs,
needs_of), both from the same Selector, so the plan cannot leave out a cell the score reads."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from interference.core.groups import OF_A_TRIPLE
from interference.studies.pairs.cases import BASELINE, PAPERS_CONCURRENT_CASES, UNLIMITED, pair_name

if TYPE_CHECKING:  # planning loads no pandas
    import pandas as pd

# The microservices the papers paired: a finding that names none is about these (never the
# CPU-spinning control P of config/control.yaml, which enters only where a finding names it).
PAPERS = ("L", "S", "B", "NS", "NR", "Y")


@dataclass(frozen=True)
class Selector:
    """The cells of interference.tsv (or of a paper's own IRs) a finding reads: its cases,
    targets and partners (None: the papers' defaults), pairing ("same", "mixed" or None), host,
    metric (None: a target's metrics averaged per pairing) and effect ("partner": the partner's
    own effect, which needs the unlimited baseline, Case 1u)."""

    cases: tuple[str, ...] | None = None
    targets: tuple[str, ...] | None = None
    partners: tuple[str, ...] | None = None
    pairing: str | None = None
    host: str | None = None
    metric: str | None = None
    effect: str | None = None

    @classmethod
    def of(cls, args: dict) -> Selector:
        """From a catalogue entry's args (other keys, a check's own, are not the selector's)."""

        def names(key):
            return tuple(args[key]) if key in args else None

        return cls(names("cases"), names("targets"), names("partners"), args.get("pairing"),
                   args.get("host"), args.get("metric"), args.get("effect"))  # fmt: skip

    def but(self, **changes) -> Selector:
        return replace(self, **{k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()})

    @property
    def case_list(self) -> tuple[str, ...]:
        return self.cases if self.cases is not None else PAPERS_CONCURRENT_CASES

    def rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of an IR table (ours or a paper's) this selection picks; pairs only (the papers
        measured no triple)."""
        df = df[df["case"].isin(self.case_list)]
        df = df[~df["partner"].astype(str).str.contains(OF_A_TRIPLE)]
        for names, column in ((self.targets, "target"), (self.partners, "partner")):
            df = df[df[column].isin(names if names is not None else PAPERS)]
        if self.pairing == "mixed":
            df = df[df["target"] != df["partner"]]
        elif self.pairing == "same":
            df = df[df["target"] == df["partner"]]
        if self.host is not None and "host" in df:
            df = df[df["host"] == self.host]
        if self.metric is not None and "metric" in df:
            df = df[df["metric"] == self.metric]
        return df

    def pairs(self) -> list[str]:
        """The pairs (config names, "L+S") whose runs make the selected cells."""
        out = []
        for t in self.targets or PAPERS:
            for p in self.partners or PAPERS:
                if (self.pairing == "mixed" and t == p) or (self.pairing == "same" and t != p):
                    continue
                name = pair_name(sorted((t, p), key=PAPERS.index if {t, p} <= set(PAPERS) else str))
                if name not in out:
                    out.append(name)
        return out

    def needs(self) -> dict:
        """The pair study's config keys whose runs make the selected cells (steps/plan.py merges
        them into the config): microservices, pairs, and cases with their baselines."""
        alone = [BASELINE, UNLIMITED] if self.effect == "partner" else [BASELINE]
        named = {*(self.targets or PAPERS), *(self.partners or PAPERS)}
        members = [m for m in PAPERS if m in named] + sorted(named - set(PAPERS))
        return {"microservices": members, "pairs": self.pairs(), "cases": [*alone, *self.case_list]}


def needs_of(selectors: list[Selector]) -> dict:
    """What the plan must run for every selection a check reads: their union, in order (a
    finding on another host is refused before, by Check.needs)."""
    out: dict[str, list] = {"microservices": [], "pairs": [], "cases": []}
    for s in selectors:
        for key, values in s.needs().items():
            out[key] += [v for v in values if v not in out[key]]
    return out
