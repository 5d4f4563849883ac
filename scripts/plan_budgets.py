"""What a budget buys on this host: the findings the plan takes at each budget, and the minutes
every testable finding would need, per study (steps/plan.py with the studies' models scaled to
this host as `make paper` plans: its kept scale, else its earlier runs, else its probe). Nothing runs and nothing is
written; the probe takes about a second unless this boot has one; the planning about a minute.

  .venv/bin/python scripts/plan_budgets.py [--config config/config.yaml] [--budgets 45 60 90 120] [--least]

--least prices the pair study at the least its statistics take (least(): two runs a cell,
two samples of each member in a window, no drift check): the floor under any plan's cost."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interference.steps import estimate, plan
from interference.steps.config import model_seconds
from interference.studies.pairs import cases

# The least the pair study's statistics take: runs are the unit (two a cell), a concurrent window
# holds two samples of each member, and the baselines are not measured again at the end.
LEAST_RUNS = 2
LEAST_OVERLAP_SAMPLES = 2


def least(cfg: dict) -> dict:
    pairs = {
        **cfg["studies"]["pairs"],
        "repetitions": dict.fromkeys(cases.CASES, LEAST_RUNS),
        "drift_check": False,
    }
    if "phases" in pairs:  # the paired design: one block of the fewest iterations a phase
        pairs["phases"] = {**pairs["phases"], "blocks": 1, "iterations": LEAST_OVERLAP_SAMPLES}
    else:
        pairs["adaptive"] = {**pairs.get("adaptive", {}), "min_overlap_samples": LEAST_OVERLAP_SAMPLES}
    return {**cfg, "studies": {**cfg["studies"], "pairs": pairs}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--budgets", type=float, nargs="+", default=[45, 60, 90, 120])
    ap.add_argument("--least", action="store_true", help="the pair study at the least its statistics take")
    a = ap.parse_args()
    cfg = yaml.safe_load(Path(a.config).read_text())
    if a.least:
        cfg = least(cfg)
    # As `make paper` scales them: this host's kept scale, else its history or probe (nothing written).
    said = estimate.host_scale(
        Path("results"), cfg.get("host") or socket.gethostname().split(".")[0], keep=False
    )
    scale = said.factor

    def seconds(c):
        return model_seconds(c, scale)

    print(estimate.scale_words(said))
    every = plan.expand({**cfg, "budget_min": None}, seconds, None)
    testable = every["findings_plan"]["planned"]
    print(
        f"every testable finding ({len(testable)}): {(seconds(every) + plan.FIXED_S) / 60:.1f} min by the models"
    )
    for name, part in every["studies"].items():
        alone = {**every, "studies": {name: part}}
        print(f"  {name:10s} {seconds(alone) / 60:6.1f} min")
    for budget in a.budgets:
        record = plan.expand({**cfg, "budget_min": budget}, seconds, None)["findings_plan"]
        cheapest = sorted(record["over_budget"].items(), key=lambda kv: kv[1])[:3]
        nxt = ", ".join(f"{k} +{v:.1f} min" for k, v in cheapest) or "none"
        print(
            f"budget {budget:5.0f} min: {len(record['planned']):2d} planned ({record['planned_min']:.1f} min); next: {nxt}"
        )


if __name__ == "__main__":
    main()
