"""Measures what the orchestration costs per run: a container's start-to-removal time with the
case's limits, against the benchmark time of the iterations it carries.

  python benchmarks/bench_orchestration.py --image-json results/images/<host>/docker/L.json \
      [--meta results/raw/<host>/docker/case1/L/rep1/meta.json] [--repeat 20]

Prints the lifecycle of an empty container (docker run --rm <image> true) and, given a Case 1
meta.json, the gap between iterations (container stop + removal + next start) next to the
iterations' own durations."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path


def empty_container_seconds(image: str, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(
            ["docker", "run", "--rm", "--cpuset-cpus", "0", "--memory", "1g", image, "true"],
            check=True,
            capture_output=True,
        )
        out.append(time.perf_counter() - t0)
    return out


def describe(name: str, xs: list[float]) -> str:
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{name}: mean {statistics.mean(xs):.3f} s, sd {sd:.3f} s, min {min(xs):.3f} s, n {len(xs)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image-json", type=Path, required=True)
    ap.add_argument("--meta", type=Path)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    image = json.loads(a.image_json.read_text())["id"]
    print(describe("empty container run+stop+rm", empty_container_seconds(image, a.repeat)))
    if a.meta:
        its = json.loads(a.meta.read_text())["members"][0]["iterations"]
        work = [i["end"] - i["start"] for i in its]
        gaps = [b["start"] - a_["end"] for a_, b in zip(its, its[1:])]
        print(describe("benchmark iteration", work))
        if gaps:
            print(describe("gap between iterations (container end, removal, next start)", gaps))
            print(f"orchestration share of a Case 1 run: {sum(gaps) / (sum(gaps) + sum(work)):.1%}")


if __name__ == "__main__":
    main()
