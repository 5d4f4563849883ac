"""What the host is, recorded with every run."""

from __future__ import annotations

import os
import platform
import socket


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_bytes() -> int | None:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def describe() -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": memory_bytes(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "loadavg_before": list(os.getloadavg()),
    }
