"""What does a TCP round trip cost on this host with client and server on one core, on two, or
wherever the scheduler puts them? (issue 52: NR, the TCP_RR stand-in, had the widest intervals of
the pair study, a variance between runs of 0.05-0.06 against L's 0.008, and "gained" beside busy
partners.)

sockperf's TCP ping-pong (the NR microservice's tool, one message in flight) on loopback, host
processes only (no container, so nothing but the placement differs), in these conditions, in a
fresh random order each round, a fresh server and client each time:
  same       server and client pinned to the first core
  cross      server on the first core, client on the last
  free       both on any core
  free-busy  both on any core, a busy loop pinned to the last core (a partner spinning a core)
On a VM a wakeup on another vCPU is an inter-processor interrupt that the hypervisor delivers, so
`cross` can cost many times `same`; `free` then takes whichever the scheduler chose, and a busy
partner pushes client and server onto the one free core. Each condition's round trip (µs) is
divided by `same` in its round; the mean log ratio gets a t interval over rounds (the rounds are
the replicate). The pair study's config key `network_server_cpus` is the answer it informs.

  .venv/bin/python benchmarks/bench_rr_placement.py --rounds 5 --seconds 2 --out /tmp/rr.tsv
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
from scipy import stats

CONDITIONS = ["same", "cross", "free", "free-busy"]
PORT = 11311


def pinned(cpu: int | None, argv: list[str]) -> list[str]:
    return argv if cpu is None else ["taskset", "-c", str(cpu), *argv]


def round_trip(condition: str, first: int, last: int, seconds: int) -> float:
    """One fresh server and client in this condition: sockperf's mean full round trip (µs)."""
    server_cpu, client_cpu = {"same": (first, first), "cross": (first, last)}.get(condition, (None, None))
    busy = None
    if condition == "free-busy":
        busy = subprocess.Popen(pinned(last, ["sh", "-c", "while :; do :; done"]))
    server = subprocess.Popen(
        pinned(server_cpu, ["sockperf", "server", "--tcp", "-p", str(PORT)]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        client = ["sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(PORT)]
        client += ["-t", str(seconds), "--full-rtt"]
        out = subprocess.run(pinned(client_cpu, client), capture_output=True, text=True, timeout=seconds + 30)
        m = re.search(r"Summary: Round trip is ([\d.]+) usec", out.stdout + out.stderr)
        if not m:
            raise RuntimeError(f"sockperf printed no round trip:\n{out.stdout}{out.stderr}")
        return float(m.group(1))
    finally:
        for p in (server, busy):
            if p:
                p.kill()
                p.wait()


def ratio_to_same(table: pd.DataFrame, condition: str) -> tuple[float, float, float]:
    """exp of the mean log ratio to `same` over rounds, with its 95 % t interval over rounds."""
    wide = table.pivot(index="round", columns="condition", values="rtt_us")
    d = np.log(wide[condition] / wide["same"]).dropna()
    if len(d) < 2:
        return float(np.exp(d.mean())), float("nan"), float("nan")
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(np.exp(d.mean())), float(np.exp(d.mean() - half)), float(np.exp(d.mean() + half))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=2, help="length of one ping-pong test")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write every measurement here (TSV)")
    args = ap.parse_args()
    if not shutil.which("sockperf") or not shutil.which("taskset"):
        sys.exit("needs sockperf and taskset (apt-get install sockperf util-linux)")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("needs two cores")
    rng = random.Random(args.seed)
    rows = []
    for r in range(1, args.rounds + 1):
        for condition in rng.sample(CONDITIONS, len(CONDITIONS)):
            rtt = round_trip(condition, cores[0], cores[-1], args.seconds)
            rows.append({"round": r, "condition": condition, "rtt_us": rtt})
            print(f"round {r} {condition:9s} {rtt:8.1f} µs", file=sys.stderr)
    table = pd.DataFrame(rows)
    if args.out:
        table.to_csv(args.out, sep="\t", index=False)
    print(f"cores {cores[0]} and {cores[-1]}, {args.rounds} rounds of {args.seconds} s tests")
    print("condition   median µs   ratio to same [95 % CI over rounds]")
    for condition in CONDITIONS:
        median = table[table.condition == condition].rtt_us.median()
        ratio, low, high = ratio_to_same(table, condition)
        print(f"{condition:10s} {median:10.1f}   {ratio:6.2f} [{low:.2f}, {high:.2f}]")


if __name__ == "__main__":
    main()
