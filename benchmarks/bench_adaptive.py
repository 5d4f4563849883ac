"""What an adaptive Case 1 rule bought: for each Case 1 run of a results folder (run with
config/adaptive.yaml or any `adaptive` rule), the iterations and wall time it took to stop, the
precision reached, and the precision and wall time the fixed count of the papers' protocol
(--fixed, default 10) would have given, from the same run's first iterations.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_adaptive.py WORKDIR [--fixed 10]"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from interference import parsers
from interference.core.microservices import registry
from interference.studies.pairs.adaptive import relative_half_widths


def widest(values: dict[str, list[float]], n: int) -> float | None:
    got = [v for v in relative_half_widths({m: x[:n] for m, x in values.items()}).values() if v is not None]
    return max(got) if got else None


def case1_row(meta_path: Path, fixed: int) -> dict:
    meta = json.loads(meta_path.read_text())
    member = meta["members"][0]
    ms = registry()[member["microservice"]]
    parse = parsers.get(ms.parser)
    values: dict[str, list[float]] = {m.name: [] for m in ms.metrics}
    ends = []
    for it in member["iterations"]:
        if it["status"] != "ok":
            continue
        got = parse(
            (meta_path.parent / it["stdout"]).read_text(), (meta_path.parent / it["stderr"]).read_text()
        )
        for m in values:
            if isinstance(got.get(m), int | float):
                values[m].append(float(got[m]))
        ends.append(it["end"])
    n = len(ends)
    stop = meta.get("stopping") or {}
    return {
        "microservice": ms.id,
        "iterations": n,
        "stopped_by": stop.get("stopped_by", "fixed count"),
        "wall_s": round(meta["finished"] - meta["started"], 1),
        "widest_ci": widest(values, n),
        f"widest_ci_at_{fixed}": widest(values, fixed) if n >= fixed else None,
        f"wall_s_at_{fixed}": round(ends[fixed - 1] - meta["started"], 1) if n >= fixed else None,
        "worst_metric": max(relative_half_widths(values).items(), key=lambda kv: kv[1] or 0)[0],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--fixed", type=int, default=10)
    a = ap.parse_args()
    metas = sorted(a.workdir.glob("results/raw/*/*/pairs/case1/*/rep*/meta.json"))
    table = pd.DataFrame([case1_row(p, a.fixed) for p in metas])
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
