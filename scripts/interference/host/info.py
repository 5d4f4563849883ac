"""What the host is, recorded with every run.

Cores and memory are what this process can use: a host that is itself confined (a container with
its own engine, a Slurm job, a cpuset) reports its cpuset and its cgroup's memory limit, not the
machine's.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from interference.host.cgroups import ROOT, process_folders


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _limits_up(folder: Path, root: Path, name: str):
    """The limit file `name` of folder and of each ancestor up to the controller's root: a
    child's own file says nothing of its parents' limits, which bind it too."""
    while True:
        try:
            text = (folder / name).read_text().strip()
        except OSError:
            text = None
        # v1 says "unlimited" with a huge page-rounded number, v2 with "max".
        if text and text != "max" and int(text) < 2**62:
            yield int(text)
        if folder == root or folder.parent == folder:
            return
        folder = folder.parent


def cgroup_memory_limit(proc_cgroup: str, root: Path = ROOT) -> int | None:
    """The tightest memory limit over the cgroup in /proc/self/cgroup's text (v1 or v2) and its
    ancestors; None if there is none."""
    folders = process_folders(proc_cgroup, root)
    if "memory" in folders:
        return min(_limits_up(folders["memory"], root / "memory", "memory.limit_in_bytes"), default=None)
    if "v2" in folders:
        return min(_limits_up(folders["v2"], root, "memory.max"), default=None)
    return None


def memory_bytes() -> int | None:
    total = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        limit = cgroup_memory_limit(Path("/proc/self/cgroup").read_text())
    except OSError:
        limit = None
    return min(x for x in (total, limit) if x is not None) if total or limit else None


def describe() -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "memory_bytes": memory_bytes(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "loadavg_before": list(os.getloadavg()),
    }
