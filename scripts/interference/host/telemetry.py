"""Contention telemetry of a run: what the kernel says about pressure and throttling while it measures.

A thread of the runner samples every `interval_s` into <raw folder>/telemetry.tsv, long form
(time, source, counter, value), every counter cumulative:
  source "host"   psi_{cpu,memory,io}_{some,full}_us   /proc/pressure/*: total stall time
                  ctxt                                 /proc/stat: context switches
                  steal_ticks                          /proc/stat: time the hypervisor ran
                                                       something else on this VM's CPUs
  source <entity> cpu_usage_ns                         cgroup v1 cpuacct.usage, v2 cpu.stat
                  nr_periods, nr_throttled, throttled_ns  cpu.stat (CFS quota periods)
                  memory_failcnt, oom_kill             v1 memory.failcnt, memory.oom_control;
                                                       v2 memory.events (max, oom_kill)
                  psi_*_us                             v2 only: the cgroup's own pressure files
An entity is a container the run started, found by its first process's /proc/<pid>/cgroup and
sampled at once, then every interval until it ends. `rates` turns the counters into rates
over any interval (an iteration) lying within the samples, interpolating between them.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

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


def read(path: Path) -> pd.DataFrame:
    if not path.exists():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(path, sep="\t", dtype={"source": str, "counter": str})


def _rate(counter: str, delta, seconds) -> tuple[str, object]:
    """A counter's increase over an interval as the column it becomes."""
    if counter.endswith("_us"):  # stall time: a share of the interval
        # At most the whole interval: a sample's time is read just before its counter, so on a
        # saturated machine the counter may run ahead of its timestamp and a share pass 1.
        return counter.removesuffix("_us"), np.minimum(delta / 1e6 / seconds, 1.0)
    if counter == "throttled_ns":
        return "throttled", delta / 1e9 / seconds
    if counter == "cpu_usage_ns":
        return "cpu_cores", delta / 1e9 / seconds
    if counter == "ctxt":
        return "ctxt_per_s", delta / seconds
    if counter == "steal_ticks":  # CPUs' worth of time the hypervisor gave to others
        return "steal_cores", delta / CLOCK_TICKS / seconds
    return counter, delta  # events: a count


def rates(samples: pd.DataFrame, starts, ends) -> dict[str, np.ndarray]:
    """One source's counters over each interval [starts[i], ends[i]]: PSI and throttled time as
    a share of the interval, ctxt and CPU time per second, events as counts. Counters are
    interpolated linearly between samples; an interval not wholly within the samples gets NaN."""
    starts, ends = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    out = {}
    for counter, c in samples.groupby("counter"):
        t, v = c["time"].to_numpy(float), c["value"].to_numpy(float)
        inside = (
            (ends > starts) & (starts >= t[0]) & (ends <= t[-1])
            if len(t) >= 2
            else np.zeros(len(starts), bool)
        )
        name, value = _rate(
            counter, np.interp(ends, t, v) - np.interp(starts, t, v), np.where(inside, ends - starts, 1)
        )
        out[name] = np.where(inside, value, np.nan)
    return out


def per_interval(tel: pd.DataFrame, source: str, start: float, end: float) -> dict[str, float]:
    """rates() of one source over one interval, without the NaNs."""
    got = rates(tel[tel["source"] == source], [start], [end])
    return {k: float(v[0]) for k, v in got.items() if not np.isnan(v[0])}


def _entities_of(meta: dict, member) -> list[str]:
    """The entities that ran member k (its containers: "member1", "member1+member2"; no servers)."""
    want = f"member{member}"
    return [
        c["name"]
        for c in meta.get("containers", [])
        if want in c.get("role", "").split("+") and not c["role"].startswith("server")
    ]


def attach(df: pd.DataFrame, meta: dict, raw_dir: Path) -> pd.DataFrame:
    """df's rows with the telemetry over each row's [start, end]: the host's (psi_*, ctxt_per_s,
    steal_cores)
    and, for a row of a member, its entity's (cpu_cores, throttled, nr_throttled, memory_failcnt,
    oom_kill; cgroup_psi_* on cgroup v2). Rows without start/end, or a run without telemetry,
    are returned unchanged."""
    info = meta.get("telemetry")
    if not info or df.empty or not {"start", "end"} <= set(df.columns):
        return df
    tel = read(raw_dir / info["file"])
    starts = pd.to_numeric(df["start"], errors="coerce").to_numpy(float)
    ends = pd.to_numeric(df["end"], errors="coerce").to_numpy(float)
    extra = pd.DataFrame(rates(tel[tel["source"] == "host"], starts, ends), index=df.index)
    by_source = dict(iter(tel[tel["source"] != "host"].groupby("source")))
    if "member" in df.columns:
        for member in df["member"].dropna().unique():
            rows = (df["member"] == member).to_numpy() & ~np.isnan(starts)
            # Each row from the first of its member's entities that was sampled before and after
            # it: a cgroup's last counts go with it when its container ends, so a short Case 1
            # iteration between a container's first sample and its end gets no entity values
            # rather than a part of them.
            for name in _entities_of(meta, member):
                if name not in by_source or not rows.any():
                    continue
                got = rates(by_source[name], starts[rows], ends[rows])
                covered = (
                    ~np.all([np.isnan(v) for v in got.values()], axis=0)
                    if got
                    else np.zeros(rows.sum(), bool)
                )
                where = np.flatnonzero(rows)[covered]
                for k, v in got.items():
                    column = "cgroup_" + k if k.startswith("psi_") else k
                    if column not in extra:
                        extra[column] = np.nan
                    extra.loc[df.index[where], column] = v[covered]
                rows[where] = False  # taken
    return pd.concat([df, extra], axis=1)
