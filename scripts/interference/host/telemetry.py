"""Contention telemetry of a run: what the kernel says about pressure and throttling while it measures.

A thread of the runner samples every `interval_s` into <raw folder>/telemetry.tsv, long form
(time, source, counter, value), every counter cumulative:
  source "host"   psi_{cpu,memory,io}_{some,full}_us   /proc/pressure/*: total stall time
                  ctxt                                 /proc/stat: context switches
                  steal_ticks                          /proc/stat: time the hypervisor ran
                                                       something else on this VM's CPUs
                  steal_ticks_cpu<N>                   the same per CPU (a member's own CPUs:
                                                       telemetry_rates.attach's own_steal)
  source <entity> cpu_usage_ns                         cgroup v1 cpuacct.usage, v2 cpu.stat
                  nr_periods, nr_throttled, throttled_ns  cpu.stat (CFS quota periods)
                  memory_failcnt, oom_kill             v1 memory.failcnt, memory.oom_control;
                                                       v2 memory.events (max, oom_kill)
                  psi_*_us                             v2 only: the cgroup's own pressure files
An entity is a container the run started, found by its first process's /proc/<pid>/cgroup and
sampled at once, then every interval until it ends. The parse step turns the counters into
rates over each iteration (host/telemetry_rates.py); this module, which the runner imports, needs
neither pandas nor numpy.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from interference.host.cgroups import process_folders

PRESSURE = Path("/proc/pressure")
COLUMNS = ["time", "source", "counter", "value"]
PSI_KINDS = ("cpu", "memory", "io")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # /proc/stat's unit


def read_psi(path: Path, kind: str) -> dict[str, int]:
    """'some'/'full' total stall µs of one pressure file; {} where the kernel has none."""
    out = {}
    try:
        for line in path.read_text().splitlines():
            level, *fields = line.split()
            total = dict(f.split("=") for f in fields)["total"]
            out[f"psi_{kind}_{level}_us"] = int(total)
    except (OSError, KeyError, ValueError):
        return {}
    return out


def host_counters(pressure: Path = PRESSURE) -> dict[str, int]:
    out = {}
    for kind in PSI_KINDS:
        out |= read_psi(pressure / kind, kind)
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("ctxt "):
                    out["ctxt"] = int(line.split()[1])
                elif line.startswith("cpu "):  # all CPUs: user nice system idle iowait irq softirq steal
                    out["steal_ticks"] = int(line.split()[8])
                elif line.startswith("cpu"):  # one CPU: cpu<N> and the same fields
                    fields = line.split()
                    out[f"steal_ticks_{fields[0]}"] = int(fields[8])
    except OSError:
        pass
    return out


def _keyed(path: Path) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split() for line in path.read_text().splitlines())}


def cgroup_counters(dirs: dict[str, Path]) -> dict[str, int]:
    """The entity's counters; raises OSError once its cgroup is gone."""
    out = {}
    if "v2" in dirs:
        d = dirs["v2"]
        stat = _keyed(d / "cpu.stat")
        out |= {
            "cpu_usage_ns": stat["usage_usec"] * 1000,
            "nr_periods": stat.get("nr_periods", 0),
            "nr_throttled": stat.get("nr_throttled", 0),
            "throttled_ns": stat.get("throttled_usec", 0) * 1000,
        }
        events = _keyed(d / "memory.events") if (d / "memory.events").exists() else {}
        out |= {"memory_failcnt": events.get("max", 0), "oom_kill": events.get("oom_kill", 0)}
        for kind in PSI_KINDS:
            out |= read_psi(d / f"{kind}.pressure", kind)
        return out
    if "cpuacct" in dirs:
        out["cpu_usage_ns"] = int((dirs["cpuacct"] / "cpuacct.usage").read_text())
    if "cpu" in dirs:
        stat = _keyed(dirs["cpu"] / "cpu.stat")
        out |= {
            "nr_periods": stat.get("nr_periods", 0),
            "nr_throttled": stat.get("nr_throttled", 0),
            "throttled_ns": stat.get("throttled_time", 0),
        }
    if "memory" in dirs:
        out["memory_failcnt"] = int((dirs["memory"] / "memory.failcnt").read_text())
        oom = (dirs["memory"] / "memory.oom_control").read_text()
        m = re.search(r"^oom_kill (\d+)", oom, re.MULTILINE)
        out["oom_kill"] = int(m.group(1)) if m else 0
    return out


class Sampler:
    """Samples the host and every watched entity every interval_s until stopped, into path.

    resolve(name) gives an entity's first process id (None: not running yet or not known); a
    runtime whose entities have no pid here (a VM's guest) gives host rows only."""

    def __init__(self, path: Path, interval_s: float, resolve: Callable[[str], int | None]):
        self.path = path
        self.interval_s = interval_s
        self.resolve = resolve
        self.pending: list[str] = []
        self.dirs: dict[str, dict[str, Path]] = {}
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.wake = threading.Event()  # a new entity: sample now, so its counters start near 0
        self.thread = threading.Thread(target=self._loop, name="telemetry", daemon=True)
        self.samples = 0

    def watch(self, name: str) -> None:
        with self.lock:
            self.pending.append(name)
        self.wake.set()

    def wait_samples(self, n: int = 2, timeout_s: float = 60) -> bool:
        """Wait until n more samples are written (two after a watch(): the one under way may have
        begun before it); False if the timeout came first."""
        goal, deadline = self.samples + n, time.time() + timeout_s
        while self.samples < goal:
            if time.time() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _find(self) -> None:
        with self.lock:
            pending, self.pending = self.pending, []
        for name in pending:
            try:
                pid = self.resolve(name)
                text = Path(f"/proc/{pid}/cgroup").read_text() if pid else None
            except Exception:  # gone already, or a runtime without pids here
                text = None
            if text:
                self.dirs[name] = process_folders(text)

    def sample(self, f) -> None:
        self._find()
        now = f"{time.time():.6f}"
        rows = [("host", k, v) for k, v in host_counters().items()]
        for name, dirs in list(self.dirs.items()):
            try:
                rows += [(name, k, v) for k, v in cgroup_counters(dirs).items()]
            except (OSError, KeyError, ValueError):
                del self.dirs[name]  # ended: its last sample stays
        f.write("".join(f"{now}\t{s}\t{k}\t{v}\n" for s, k, v in rows))
        f.flush()
        self.samples += 1

    def _loop(self) -> None:
        with open(self.path, "a") as f:
            while not self.stop_event.is_set():
                self.sample(f)
                self.wake.wait(self.interval_s)
                self.wake.clear()
            self.sample(f)  # the end of the run

    def __enter__(self) -> Sampler:
        self.path.write_text("\t".join(COLUMNS) + "\n")
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.wake.set()
        self.thread.join()
