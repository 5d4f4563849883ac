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

CGROUP_ROOT = Path("/sys/fs/cgroup")


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cgroup_memory_limit(proc_cgroup: str, root: Path = CGROUP_ROOT) -> int | None:
    """The memory limit of the cgroup in /proc/self/cgroup's text (v1 or v2), None if unlimited."""
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            limit = root / "memory" / path.lstrip("/") / "memory.limit_in_bytes"
        elif controllers == "":
            limit = root / path.lstrip("/") / "memory.max"
        else:
            continue
        try:
            text = limit.read_text().strip()
        except OSError:
            continue
        # v1 says "unlimited" with a huge page-rounded number, v2 with "max".
        if text != "max" and int(text) < 2**62:
            return int(text)
    return None


def memory_bytes() -> int | None:
    total = None
    try:
        for line in open("/proc/meminfo"):
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
