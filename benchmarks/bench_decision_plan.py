"""What pricing findings by the runs their verdict needs buys (issue 52 item 7): the default's
plan at each budget priced by runs (decision_power: null, as before) and by decisions
(decision_power: P), with the findings each plans, its minutes by the models, and the decisions
it expects: the sum over its planned findings of the probability that the rule reproduces the
paper's values (findings.power; the findings nothing prices are counted apart, their chance
unknown). Nothing runs or is written; the models are scaled to this host as `make paper` plans.

  .venv/bin/python benchmarks/bench_decision_plan.py [--config config/config.yaml] [--budgets 45 90] [--power 0.8]

Run from a folder whose results/ is the host's (its durations scale the models, its
variance_components.tsv the noise); an empty folder plans with the probe and the prior."""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.findings.verdict import Band  # noqa: E402
from interference.steps import estimate, plan, plan_decisions, verdict_price  # noqa: E402
from interference.steps.config import load, measured_runs, model_seconds  # noqa: E402
from interference.studies.pairs import PUBLISHED_DIR  # noqa: E402
from interference.studies.pairs.findings.paper_values import published_cells  # noqa: E402


def expected(record: dict, base: dict, entries: dict, noise, power: float) -> tuple[float, int]:
    """(the decisions the plan expects from its priced findings, how many it plans unpriced)."""
    total, unpriced = 0.0, 0
    for i in record["planned"]:
        e = entries[i]
        need = plan.need_of(e)
        price = plan_decisions.priced(base, e, need, power, noise) if isinstance(need, plan.Need) else None
        if price is None:
            unpriced += 1
            continue
        factor = (record.get("priced") or {}).get(i, [1.0])[0]
        part = plan_decisions.pairs_part(base, need)
        cells = verdict_price.cells_at(published_cells(PUBLISHED_DIR, e["args"]), part, factor, noise)
        total += verdict_price.p_reproduced(cells, Band.of(e["expect"]), e["quantifier"])
    return total, unpriced


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    ap.add_argument("--budgets", type=float, nargs="+", default=[45.0, 90.0])
    ap.add_argument("--power", type=float, default=0.8)
    a = ap.parse_args(argv)
    raw = load(a.config)
    scale = estimate.host_scale(Path("results"), raw["host"])
    done = measured_runs(Path("."))
    noise = verdict_price.noise(Path("results"), raw["host"], raw["runtimes"][0])
    print(f"Models scaled: {estimate.scale_words(scale)}. Noise: "
          + ", ".join(f"{t} {noise.source[t]}" for t in sorted(noise.source)))  # fmt: skip
    entries = {e["id"]: e for e in plan.catalogue()}
    base = {k: v for k, v in raw.items() if k not in ("findings", "budget_min", "findings_plan")}
    base.pop("decision_power", None)
    for budget in a.budgets:
        for power in (None, a.power):
            cfg = {**copy.deepcopy(raw), "budget_min": budget, "decision_power": power}
            out = plan.expand(cfg, lambda c: model_seconds(c, scale.factor, done), None, noise=noise)
            r = out["findings_plan"]
            exp, unpriced = expected(r, base, entries, noise, a.power)
            how = "runs" if power is None else f"decisions (power {power:g})"
            print(f"{budget:g} min, priced by {how}: {len(r['planned'])} planned, {r['planned_min']:.0f} min by the "
                  f"models; {exp:.1f} decisions expected from the paper's values, {unpriced} planned unpriced; "
                  f"factors: {', '.join(f'{i} ×{f:g}' for i, (f, _) in (r.get('priced') or {}).items() if i in r['planned'] and f > 1) or 'none'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
