"""Settle what is still open: more runs for the findings that are inconclusive for imprecision.

  python -m interference.steps.settle [--config config/config.yaml] --budget 30 [--run]
  make settle BUDGET=30

Reads the scorecard (results/stats/findings.tsv) and takes the pair-study findings that are
inconclusive with a settle factor (claims.py: F times the runs per cell would decide it with a
probability of 90 % given the data; none where an estimate lies too near the claim's edge).
Each needs, in every cell its check reads, ceil(F × runs) runs instead of its runs: extra
repetitions of those cells (studies.pairs.extra_repetitions, written to results/settle.yaml).
The findings are taken cheapest first by the minutes their extra runs add (steps/plan.py's
rule and models) within the budget; the plan is printed with the findings it expects to settle.
With --run it then runs snakemake on the config and that overlay (the runs already made are
kept) and prints how many of the expected findings the new scorecard decided."""

from __future__ import annotations

import argparse
import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from interference.steps import estimate, plan, verdict_price
from interference.steps.config import load, model_seconds

FINDINGS = Path("results/stats/findings.tsv")
OVERLAY = Path("results/settle.yaml")
MAX_FACTOR = 10.0  # beyond ten times the runs a cell, settling is not practical
DECIDED = ("reproduced", "not reproduced")
INCONCLUSIVE = "inconclusive"


def open_findings(findings: pd.DataFrame) -> pd.DataFrame:
    """The pair-study findings inconclusive for imprecision, with a practical settle factor."""
    f = findings.assign(settle_factor=pd.to_numeric(findings.get("settle_factor"), errors="coerce"))
    keep = (
        (f["verdict"] == INCONCLUSIVE) & (f["study"] == "pairs") & f["settle_factor"].between(1, MAX_FACTOR)
    )
    return f[keep]


def extra_runs(entry: dict, factor: float, pairs_cfg: dict) -> dict[str, int]:
    """The extra repetitions of each cell the finding's check reads ("case/pair": runs) that
    make its runs factor times those made (the config's and the extra ones the plan bought);
    the baselines of its targets where it names them."""
    need = plan.need_of(entry)
    if isinstance(need, str):
        return {}
    targets = (entry.get("args") or {}).get("targets")
    return verdict_price.extra_repetitions(need.part, factor, pairs_cfg, targets)


def plan_settle(config_path: Path, findings: pd.DataFrame, budget_min: float) -> tuple[dict, plan.Plan]:
    """The overlay (studies.pairs.extra_repetitions) and which findings it is planned for."""
    cfg = load(config_path)
    base = {k: v for k, v in cfg.items() if k not in ("findings", "budget_min", "findings_plan")}
    pairs_cfg = base["studies"].get("pairs")
    entries = {e["id"]: e for e in plan.catalogue()}
    needs = {}
    if pairs_cfg:
        for r in open_findings(findings).itertuples(index=False):
            extra = extra_runs(entries[r.id], r.settle_factor, pairs_cfg)
            if extra:
                needs[r.id] = plan.Need("pairs", {"extra_repetitions": extra})
    # The budget is for the extra runs: their model seconds, scaled to this host as the plan was.
    scale = estimate.host_scale(Path("results"), cfg["host"]).factor if needs else 1.0
    now = model_seconds(base, scale) if needs else 0.0

    def seconds(c: dict) -> float:
        return model_seconds(c, scale) - now

    chosen = plan.fit(base, needs, seconds, budget_min * 60) if needs else plan.Plan()
    # Only settle's own cells: the plan's extra runs (in base) stay as the plan makes them.
    only = plan.merged({"studies": {"pairs": {"extra_repetitions": {}}}}, [needs[i] for i in chosen.planned])
    extra = only["studies"]["pairs"]["extra_repetitions"]
    overlay = {"studies": {"pairs": {"extra_repetitions": extra}}} if extra else {}
    return overlay, chosen


def more_runs(overlay: dict, config_path: Path) -> int:
    """The runs the overlay adds to those the plan makes (its extra runs count once)."""
    extra = overlay.get("studies", {}).get("pairs", {}).get("extra_repetitions") or {}
    have = load(config_path)["studies"].get("pairs", {}).get("extra_repetitions") or {} if extra else {}
    return sum(n - have.get(cell, 0) for cell, n in extra.items())


def plan_lines(
    chosen: plan.Plan, n_open: int, budget_min: float, overlay: dict, runs: int | None = None
) -> list[str]:
    if runs is None:
        runs = sum((overlay.get("studies", {}).get("pairs", {}).get("extra_repetitions") or {}).values())
    lines = [
        f"Settle: {n_open} findings are inconclusive for imprecision; {len(chosen.planned)} planned within "
        f"{budget_min:g} min ({runs} more runs, about {chosen.planned_min or 0:.0f} min by the models), "
        f"expected to settle: {', '.join(chosen.planned) or 'none'}."
    ]
    if chosen.over_budget:
        lines.append(f"Over the budget: {', '.join(chosen.over_budget)}.")
    return lines


def decided(after: pd.DataFrame, ids: list[str]) -> list[str]:
    """The planned findings the new scorecard decided (reproduced or not)."""
    now = after.set_index("id")["verdict"]
    return [i for i in ids if now.get(i) in DECIDED]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    ap.add_argument("--budget", type=float, required=True, help="minutes for the extra runs")
    ap.add_argument("--run", action="store_true", help="run them and re-score")
    ap.add_argument("--cores", type=int, default=1)
    a = ap.parse_args(argv)
    if not FINDINGS.exists():
        print(f"error: {FINDINGS} is missing: run make paper first", file=sys.stderr)
        return 2
    before = pd.read_csv(FINDINGS, sep="\t", dtype={"id": str})
    overlay, chosen = plan_settle(a.config, before, a.budget)
    for line in plan_lines(
        chosen, len(open_findings(before)), a.budget, overlay, more_runs(overlay, a.config)
    ):
        print(line)
    if not overlay:
        return 0
    OVERLAY.parent.mkdir(parents=True, exist_ok=True)
    OVERLAY.write_text(yaml.safe_dump(copy.deepcopy(overlay), sort_keys=True))
    print(f"Written {OVERLAY}: the same runs plus these cells' extra repetitions.")
    if not a.run:
        return 0
    shutil.copy(FINDINGS, FINDINGS.with_name("findings.before-settle.tsv"))
    snakemake = Path(sys.executable).parent / "snakemake"
    r = subprocess.run([str(snakemake), "--cores", str(a.cores), "report/paper.html",
                        "--configfile", str(a.config), str(OVERLAY)])  # fmt: skip
    if r.returncode != 0:
        return r.returncode
    after = pd.read_csv(FINDINGS, sep="\t", dtype={"id": str})
    got = decided(after, chosen.planned)
    print(f"Settled: {len(got)} of the {len(chosen.planned)} expected ({', '.join(got) or 'none'}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
