"""Why NR (TCP ping-pong) gets much faster beside a busy partner: the idle-wake-up test.

On an idle virtual machine each round trip waits for a halted vCPU to be woken (HLT exits to
the hypervisor, then an interrupt is injected): a busy partner keeps the vCPUs running, and
the wake-up cost disappears. If that is the cause, a spinner that takes no CPU time from the
benchmark — SCHED_IDLE, which runs only when nothing else wants the CPU — must give the same
"improvement" as a busy partner; if the improvement came from the partner's work itself
(caches, frequency), it would not.

Conditions, run in a seeded random interleaved order, each `--rounds` times:
  idle         sockperf alone (client on CPU 0, server on CPU 1, TCP on loopback)
  spin-idle    plus one SCHED_IDLE busy loop on each CPU
  spin-normal  plus one ordinary (nice 0) busy loop on each CPU: a CPU-bound partner

The larger part, measured later (benchmarks/bench_rr_placement.py, 2026-11-29): client and
server on one vCPU take about a tenth of the time they take on two, and a busy partner crowds
them onto one; the pipeline now puts a network server on its member's cores where the case
gives it cores (config network_server_cpus).

Prints per condition the transactions/s and mean round trip (the NR parser's metrics), their
mean over rounds with a t interval, and the ratio to idle; the guest's cpuidle driver is shown
(none here: idle is HLT).

  .venv/bin/python benchmarks/bench_idle_wakeup.py [--rounds 5] [--seconds 3] [--seed 1]"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.parsers import sockperf  # noqa: E402

PORT = 11111
CONDITIONS = ("idle", "spin-idle", "spin-normal")
SPIN = [sys.executable, "-c", "while True: pass"]


def spinners(condition: str) -> list[subprocess.Popen]:
    if condition == "idle":
        return []
    out = []
    for cpu in (0, 1):
        prefix = ["chrt", "--idle", "0"] if condition == "spin-idle" else []
        out.append(subprocess.Popen(["taskset", "-c", str(cpu), *prefix, *SPIN]))
    time.sleep(0.3)
    return out


def one(condition: str, seconds: float) -> dict[str, float]:
    server = subprocess.Popen(
        ["taskset", "-c", "1", "sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p", str(PORT)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    spin = []
    try:
        time.sleep(0.5)
        spin = spinners(condition)
        r = subprocess.run(
            ["taskset", "-c", "0", "sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(PORT),
             "--time", str(seconds), "--full-rtt"],
            capture_output=True, text=True, timeout=seconds + 30,
        )  # fmt: skip
        return sockperf.parse(r.stdout, r.stderr)
    finally:
        for p in [*spin, server]:
            p.kill()
            p.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    driver = Path("/sys/devices/system/cpu/cpuidle/current_driver")
    print(f"cpuidle driver: {driver.read_text().strip() if driver.exists() else 'absent'}")
    plan = [c for _ in range(a.rounds) for c in CONDITIONS]
    random.Random(a.seed).shuffle(plan)
    results: dict[str, list[dict]] = {c: [] for c in CONDITIONS}
    for i, condition in enumerate(plan, 1):
        v = one(condition, a.seconds)
        results[condition].append(v)
        print(f"{i:2d}/{len(plan)} {condition:12s} {v['transactions']:10.0f} tr/s {v['latency']:8.1f} µs")
    print(f"\n{'condition':12s} {'metric':13s} {'mean':>10s} {'95 % CI':>23s} {'vs idle':>8s}")
    for metric in ("transactions", "latency"):
        idle = np.mean([v[metric] for v in results["idle"]])
        for c in CONDITIONS:
            x = np.array([v[metric] for v in results[c]])
            half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
            print(f"{c:12s} {metric:13s} {x.mean():10.1f} [{x.mean() - half:9.1f}, {x.mean() + half:9.1f}] "
                  f"{x.mean() / idle:8.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
