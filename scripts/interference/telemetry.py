"""Contention telemetry of a run: what the kernel says about pressure and throttling while it measures.

A thread of the runner samples every `interval_s` into <raw folder>/telemetry.tsv, long form
(time, source, counter, value), every counter cumulative:
  source "host"   psi_{cpu,memory,io}_{some,full}_us   /proc/pressure/*: total stall time
                  ctxt                                 /proc/stat: context switches
  source <entity> cpu_usage_ns                         cgroup v1 cpuacct.usage, v2 cpu.stat
                  nr_periods, nr_throttled, throttled_ns  cpu.stat (CFS quota periods)
                  memory_failcnt, oom_kill             v1 memory.failcnt, memory.oom_control;
                                                       v2 memory.events (max, oom_kill)
                  psi_*_us                             v2 only: the cgroup's own pressure files
An entity is a container the run started, found by its first process's /proc/<pid>/cgroup and
sampled at once, then every interval until it ends. `per_interval` turns the counters into rates
over any interval (an iteration) lying within the samples, interpolating between them.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

CGROUP_ROOT = Path("/sys/fs/cgroup")
PRESSURE = Path("/proc/pressure")
COLUMNS = ["time", "source", "counter", "value"]
PSI_KINDS = ("cpu", "memory", "io")


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
            out |= {"ctxt": int(line.split()[1]) for line in f if line.startswith("ctxt ")}
    except OSError:
        pass
    return out


def cgroup_dirs(proc_cgroup: str, root: Path = CGROUP_ROOT) -> dict[str, Path]:
    """controller -> the cgroup folder, from a /proc/<pid>/cgroup text (v1 lines or the v2 line)."""
    lines = [line.split(":", 2) for line in proc_cgroup.splitlines()]
    if len(lines) == 1 and lines[0][1] == "":  # v2 alone (a v1 machine lists an empty "0::" too)
        return {"v2": root / lines[0][2].lstrip("/")}
    dirs = {}
    for _, controllers, path in lines:
        if controllers and path != "/":  # in a controller's root cgroup the counters are the machine's
            dirs |= {c: root / controllers / path.lstrip("/") for c in controllers.split(",")}
    return {c: d for c, d in dirs.items() if c in ("cpu", "cpuacct", "memory")}


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
                self.dirs[name] = cgroup_dirs(text)

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


def per_interval(tel: pd.DataFrame, source: str, start: float, end: float) -> dict[str, float]:
    """Each of source's counters over [start, end]: PSI and throttled time as a fraction of the
    interval, ctxt and cpu usage per second, events (throttled periods, failcnt, OOM kills) as
    counts. Counters are interpolated linearly between samples; an interval outside the samples
    gets nothing."""
    out = {}
    d = tel[tel["source"] == source]
    if end <= start:
        return out
    for counter, c in d.groupby("counter"):
        t, v = c["time"].to_numpy(float), c["value"].to_numpy(float)
        if len(t) < 2 or start < t[0] or end > t[-1]:
            continue
        delta = float(np.interp(end, t, v) - np.interp(start, t, v))
        seconds = end - start
        if counter.endswith("_us"):
            out[counter.removesuffix("_us")] = delta / 1e6 / seconds
        elif counter == "throttled_ns":
            out["throttled"] = delta / 1e9 / seconds
        elif counter == "cpu_usage_ns":
            out["cpu_cores"] = delta / 1e9 / seconds
        elif counter == "ctxt":
            out["ctxt_per_s"] = delta / seconds
        else:
            out[counter] = delta
    return out


def _entities_of(meta: dict, member) -> list[str]:
    """The entities that ran member k (its containers: "member1", "member1+member2"; no servers)."""
    want = f"member{member}"
    return [
        c["name"]
        for c in meta.get("containers", [])
        if want in c.get("role", "").split("+") and not c["role"].startswith("server")
    ]


def attach(df: pd.DataFrame, meta: dict, raw_dir: Path) -> pd.DataFrame:
    """df's rows with the telemetry over each row's [start, end]: the host's (psi_*, ctxt_per_s)
    and, for a row of a member, its entity's (cpu_cores, throttled, nr_throttled, memory_failcnt,
    oom_kill; cgroup_psi_* on cgroup v2). Rows without start/end, or a run without telemetry,
    are returned unchanged."""
    info = meta.get("telemetry")
    if not info or df.empty or not {"start", "end"} <= set(df.columns):
        return df
    tel = read(raw_dir / info["file"])
    host = tel[tel["source"] == "host"]
    entities = {s: tel[tel["source"] == s] for s in tel["source"].unique() if s != "host"}
    cache: dict[tuple, dict] = {}
    extra = []
    for row in df[["start", "end", *(["member"] if "member" in df.columns else [])]].itertuples(index=False):
        key = tuple(row)
        if key not in cache:
            start, end = float(row.start), float(row.end)
            values = per_interval(host, "host", start, end)
            for name in _entities_of(meta, getattr(row, "member", None)):
                e = entities.get(name)
                # Only an entity sampled before and after the row's interval: a cgroup's last counts
                # go with it when its container ends, so a short Case 1 iteration between a
                # container's first sample and its end gets no entity values rather than a part.
                if e is not None and len(e) and e["time"].min() <= start and end <= e["time"].max():
                    got = per_interval(e, name, start, end)
                    values |= {("cgroup_" + k if k.startswith("psi_") else k): v for k, v in got.items()}
                    break
            cache[key] = values
        extra.append(cache[key])
    return pd.concat([df.reset_index(drop=True), pd.DataFrame(extra)], axis=1)
