"""Does a barrier-synchronised microservice lose more beside busy partners than a CPU quota of
the same share costs it? (issue 55: the CPU-share model reads a member's speed at its share from
the quota sweep; STREAM lost 40-46 % in the triples where that predicted +36 %.)

One microservice's image (STREAM by default: OpenMP, static loops, a barrier after each) runs its
iterations in these conditions, in a fresh random order each round:
  case1     one core of its own (cpuset), as the pair study's Case 1: one thread
  alone     unlimited, alone: one thread per core
  quota     unlimited cores under a CFS quota of SHARE cores (what the model reads)
  busy      unlimited beside K containers each spinning one core (stress-ng): the scheduler gives
            it about SHARE cores (N / (K + 1) with equal container weights)
  busy-1    as busy, one thread
  busy-pas  as busy, OpenMP told to sleep rather than spin at its barriers (OMP_WAIT_POLICY)
Each condition's value is the median of its iterations' rates; the ratio to case1 is paired by
round, with a t interval over rounds (the rounds are the replicate: runs level).

  .venv/bin/python benchmarks/bench_barrier.py --rounds 4 --out /tmp/barrier.tsv
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
import uuid

import numpy as np
import pandas as pd
from scipy import stats

STREAM = ["/opt/microservices/S/run"]
STREAM_ENV = {"STREAM_ARRAY_ELEMENTS": "10000000", "STREAM_NTIMES": "10"}
CONDITIONS = ["case1", "alone", "quota", "busy", "busy-1", "busy-pas"]


def image(prefix: str) -> str:
    """The newest local tag of an image (the pipeline tags by content hash)."""
    out = subprocess.run(
        ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", prefix],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not out:
        sys.exit(f"no local image {prefix}: build the pipeline's images first (make paper or make test)")
    return out[0]


def triad_rates(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"^triad\t([\d.]+)", text, flags=re.MULTILINE)]


def run_condition(condition: str, s_image: str, x_image: str, share: float, spinners: int, iterations: int):
    env = dict(STREAM_ENV)
    args = ["docker", "run", "--rm", "--memory", "1g"]
    if condition == "case1":
        args += ["--cpuset-cpus", "0"]
    if condition == "quota":
        args += ["--cpus", f"{share:.3f}"]
    if condition == "busy-1":
        env["STREAM_THREADS"] = "1"
    if condition == "busy-pas":
        env["OMP_WAIT_POLICY"] = "passive"
    for k, v in env.items():
        args += ["-e", f"{k}={v}"]
    loop = " ; ".join(["/opt/microservices/S/run"] * iterations)
    names = []
    try:
        if condition.startswith("busy"):
            for _ in range(spinners):
                name = f"barrier-spin-{uuid.uuid4().hex[:8]}"
                subprocess.run(
                    [
                        "docker",
                        "run",
                        "-d",
                        "--rm",
                        "--name",
                        name,
                        x_image,
                        "stress-ng",
                        "--cpu",
                        "1",
                        "-t",
                        "120",
                    ],
                    check=True,
                    capture_output=True,
                )
                names.append(name)
            time.sleep(1.0)  # the spinners at full speed before the first iteration
        out = subprocess.run([*args, s_image, "sh", "-c", loop], capture_output=True, text=True, timeout=300)
        return triad_rates(out.stdout)
    finally:
        if names:
            subprocess.run(["docker", "rm", "-f", *names], capture_output=True)


def paired_ratio(table: pd.DataFrame, condition: str) -> tuple[float, float, float]:
    """The ratio of a condition's round medians to case1's, geometric mean over rounds with a t
    interval on the log scale (paired by round)."""
    wide = table.pivot(index="round", columns="condition", values="median")
    d = np.log(wide[condition] / wide["case1"]).dropna()
    m, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))
    t = stats.t.ppf(0.975, len(d) - 1)
    return float(np.exp(m)), float(np.exp(m - t * se)), float(np.exp(m + t * se))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--spinners", type=int, default=2, help="busy partner containers (the triples have 2)")
    ap.add_argument("--cores", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/barrier.tsv")
    a = ap.parse_args()
    share = a.cores / (a.spinners + 1)
    s_image, x_image = image("interference/s"), image("interference/x")
    rng, rows = random.Random(a.seed), []
    for r in range(a.rounds):
        order = CONDITIONS[:]
        rng.shuffle(order)
        for c in order:
            rates = run_condition(c, s_image, x_image, share, a.spinners, a.iterations)
            rows.append(
                {"round": r, "condition": c, "n": len(rates), "median": np.median(rates) if rates else np.nan}
            )
            print(f"round {r} {c:9s} triad MB/s {', '.join(f'{x:.0f}' for x in rates)}", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(a.out, sep="\t", index=False)
    print(f"\nshare the scheduler gives it beside {a.spinners} busy containers: {share:.2f} cores")
    print("condition  ratio to case1 [95 % t interval over rounds]  (IR = ratio - 1)")
    for c in CONDITIONS[1:]:
        ratio, lo, hi = paired_ratio(table, c)
        print(f"{c:9s}  {ratio:.2f} [{lo:.2f}, {hi:.2f}]")


if __name__ == "__main__":
    main()
