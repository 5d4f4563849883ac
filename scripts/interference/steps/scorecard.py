"""results/stats/findings.tsv: one row per published finding of the catalogue, with the paper's
figure, ours and its 95 % CI, the verdict, its reason and the evidence from our data.

  python -m interference.steps.scorecard --stats-dir results/stats --studies pairs ... \
      --catalogue report/published/findings.yaml --out results/stats/findings.tsv

A finding whose study is not in the config, or whose cells the results lack, is "not run in
this config" (naming the shipped config that runs it); one this machine cannot test says why.
A malformed catalogue entry, or one naming an unknown study or check, is refused."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pandas as pd
import yaml

from interference import studies
from interference.findings.claims import MOST, QUANTIFIERS, judge_claim
from interference.findings.verdict import NOT_RUN, NOT_TESTABLE, Band, Measure, Skip
from interference.rendering import findings_section as section
from interference.stores.stats_tables import StatsDir

COLUMNS = [
    "id", "paper", "source", "claim", "study", "check", "quantifier", "quantity", "expect_low",
    "expect_high", "published", "published_from", "ours", "ci_low", "ci_high", "level", "what", "n", "cells",
    "tau2", "i2", "pred_low", "pred_high", "verdict", "reason", "holds_in", "settle", "settle_factor", "evidence", "config",
]  # fmt: skip

ENTRY = {
    "type": "object",
    "required": ["id", "paper", "source", "claim", "study", "check", "quantifier", "expect"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]{3}-[0-9]+$"},
        "paper": {"enum": ["000", "001", "002", "003", "004"]},
        "source": {"type": "string"},
        "claim": {"type": "string"},
        "study": {"type": "string"},
        "check": {"type": "string"},
        "quantifier": {"enum": list(QUANTIFIERS)},
        "args": {"type": "object"},
        "expect": {
            "oneOf": [
                {"type": "object", "required": ["below"], "additionalProperties": False, "properties": {"below": {"type": "number"}}},
                {"type": "object", "required": ["above"], "additionalProperties": False, "properties": {"above": {"type": "number"}}},
                {"type": "object", "required": ["between"], "additionalProperties": False,
                 "properties": {"between": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}},
            ]
        },
        "published": {"type": "object", "required": ["value"], "properties": {"value": {"type": "number"}}},
        "config": {"type": "string"},
        "why": {"type": "string"},
        "near_edge": {"type": "string"},
    },
}  # fmt: skip


class CatalogueError(ValueError):
    """A catalogue entry is malformed or names an unknown study or check (the message names it)."""


def load_catalogue(path: Path) -> list[dict]:
    entries = yaml.safe_load(Path(path).read_text()) or []
    seen = set()
    for i, e in enumerate(entries):
        label = e.get("id", "no id") if isinstance(e, dict) else repr(e)
        where = f"{path}, entry {i + 1} ({label})"
        try:
            jsonschema.validate(e, ENTRY)
        except jsonschema.ValidationError as err:
            raise CatalogueError(f"{where}: {err.message}") from None
        if e["id"] in seen:
            raise CatalogueError(f"{where}: id {e['id']} appears twice")
        seen.add(e["id"])
        if e["study"] not in sorted(studies.registry()):
            raise CatalogueError(
                f"{where}: unknown study {e['study']!r}; known: {', '.join(sorted(studies.registry()))}"
            )
        checks = studies.get(e["study"]).checks()
        if e["check"] not in checks:
            raise CatalogueError(
                f"{where}: the {e['study']} study has no check {e['check']!r}; it has: {', '.join(sorted(checks))}"
            )
    return entries


@dataclass
class Context:
    """What a check reads: its study's tables, the recorded environment and config, the
    transcribed published data."""

    stats: StatsDir
    study: str
    env: dict
    published_dir: Path
    # Each table read once for all the study's findings; a check gets its own copy.
    read: dict = field(default_factory=dict)

    @property
    def config(self) -> dict:
        return self.env.get("config", {}).get("studies", {}).get(self.study, {})

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.read:
            self.read[name] = self.stats.table(self.study, name)
        return self.read[name].copy()


def plan_reasons(env: dict) -> dict[str, tuple[str, str]]:
    """Why the plan left findings out (config findings_plan, steps/plan.py): by id, the
    verdict and the reason."""
    record = env.get("config", {}).get("findings_plan") or {}
    budget = record.get("budget_min")
    out = {
        i: (NOT_RUN, f"over the budget of {budget:g} min: its runs would add about {m:.0f} min (a larger "
            "budget_min, or make paper BUDGET=...)")
        for i, m in (record.get("over_budget") or {}).items()
    }  # fmt: skip
    out |= {i: (NOT_RUN, why) for i, why in (record.get("elsewhere") or {}).items()}
    return out | {
        i: (NOT_TESTABLE, f"not testable here: {why}")
        for i, why in (record.get("not_testable") or {}).items()
    }


def score_one(entry: dict, ctx: Context | None, planned: tuple[str, str] | None = None) -> dict:
    band = Band.of(entry["expect"])
    check = studies.get(entry["study"]).checks()[entry["check"]]
    row = {
        **{k: entry[k] for k in ("id", "paper", "source", "claim", "study", "check", "quantifier")},
        "quantity": getattr(check, "quantity", "ir"),
        "expect_low": band.low,
        "expect_high": band.high,
        "published": entry.get("published", {}).get("value"),
        "published_from": "the paper's text" if "published" in entry else "",
        "config": entry.get("config", ""),
    }
    result = (
        Skip(NOT_RUN, f"the {entry['study']} study is not in this config")
        if ctx is None
        else check(ctx, entry.get("args", {}))
    )
    if isinstance(result, Skip):
        # Not run because the plan left it out: the plan says why (its data may be there anyway).
        verdict, why = planned or (result.verdict, result.why)
        return {**row, "verdict": verdict, "reason": why}
    m: Measure = result
    j = judge_claim(m, band, entry["quantifier"], lambda x: section.value(x, row["quantity"]))
    if row["published"] is None and m.published is not None:
        row["published"], row["published_from"] = m.published, m.published_from
    shown = j.shown or m
    low, high = (shown.low, shown.high) if j.shown else m.cell().interval()  # the verdict's interval
    if entry["quantifier"] == MOST:  # ours is then the share of cells inside the range
        row.update(quantity="share", expect_low=0.5, expect_high=1.0, published=None, published_from="")
    p = m.pooled
    return {
        **row,
        "ours": shown.estimate,
        "ci_low": low,
        "ci_high": high,
        "level": m.level,
        "what": shown.what,
        "n": m.n,
        "cells": m.cells,
        **({"tau2": p.tau2, "i2": p.i2, "pred_low": p.pred_low, "pred_high": p.pred_high} if p else {}),
        "verdict": j.verdict,
        "reason": j.reason,
        "holds_in": j.holds_in,
        "settle": j.settle,
        "settle_factor": j.settle_factor,
        "evidence": "; ".join(m.evidence),
        # The config that runs it is named only where this one does not.
        "config": "",
    }


def scorecard(
    catalogue: list[dict], stats_dir: Path, study_names: list[str], published_dir: Path
) -> pd.DataFrame:
    stats = StatsDir(stats_dir)
    env = stats.environment()
    contexts = {s: Context(stats, s, env, Path(published_dir)) for s in study_names}
    planned = plan_reasons(env)
    rows = [score_one(e, contexts.get(e["study"]), planned.get(e["id"])) for e in catalogue]
    return pd.DataFrame(rows, columns=COLUMNS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stats-dir", type=Path, required=True)
    ap.add_argument("--studies", nargs="*", default=[])
    ap.add_argument("--catalogue", type=Path, required=True)
    ap.add_argument("--published-dir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    df = scorecard(load_catalogue(a.catalogue), a.stats_dir, a.studies, a.published_dir)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out, sep="\t", index=False)
    print(df["verdict"].value_counts().to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
