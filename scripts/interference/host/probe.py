"""A short probe of this machine's speed, for the time estimate on a host with no history.

The studies' models of a run (containers/iteration-times.yaml, start costs) were measured on
one machine; another runs them faster or slower. Before the first run on a host never seen, the
estimate scales them by the ratio of this probe's time here to its time on the reference
machine (REFERENCE_S). The probe is compiled work, as the benchmarks are: copies of a numpy
array beyond the caches (memory), a SHA-256 (integer work) and a burst of process starts (what a
container's start is made of), the fastest of five. No sort: numpy's sort takes a vector kernel
chosen by the CPU's kind, and on an AMD EPYC it took 0.52 s against about 0.03 s on the Intel the
reference was first measured on, while the runs went at the same pace (×1.16 against ×1.15-1.25),
so it measured which CPU ran it, not how fast the benchmarks go (2026-11-28). Not interpreted
Python: a loop of it read 0.200 s on the venv's interpreter (pyenv 3.11.7) and 0.137 s on
Debian's 3.11.2 on the same machine in the same minute (2026-11-27), so it measured which
interpreter ran it more than the machine. Kept for this machine beside the measurement lock (at
most an hour, this boot), so that every snakemake invocation in any working folder, a dry run
included, does not measure it again."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

from interference.host.locks import LOCK_PATH

# The probe's seconds on a machine whose runs take what the models say: on the 2-core VM of
# docs/configs.md (an AMD EPYC, 2026-11-28) six probes read 0.114 to 0.136 s (median 0.117)
# while the default's runs of that day took 1.157 (84 runs, 13:50) and 1.175 times (165 runs,
# 02:37) their models, so the reference is 0.117 / 1.166 (docs/planning.md).
REFERENCE_S = 0.101
# What the probe measures; a kept probe of another version is measured again.
PROBE_VERSION = 3
SPAWNS = 40
# By its path: a caller's PATH may lack it (the host-setup tests run with a PATH of fakes).
TRUE = "/bin/true" if os.path.exists("/bin/true") else "true"
# This machine's probe, shared by every working folder; older than MACHINE_MAX_AGE_S or from
# another boot, it is measured again (the machine's load moves it).
MACHINE_CACHE = Path(os.environ.get("INTERFERENCE_PROBE", LOCK_PATH + ".probe.json"))
MACHINE_MAX_AGE_S = 3600
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
# A probe is kept only when the machine was quiet while it ran: the share of the last 10 s in
# which some task waited for a CPU (/proc/pressure/cpu, "some avg10"), before and after, at most
# this. A probe measured beside other work (a test suite, a build) reads slow, and kept it would
# shrink every plan on the machine for the hour.
QUIET_CPU_PRESSURE = 10.0
CPU_PRESSURE = Path("/proc/pressure/cpu")
# A probe of a busy machine, per cache path, for the rest of this process.
_NOT_KEPT: dict[Path, float] = {}


def _work() -> tuple:
    """The probe's inputs, made once (their making is not timed): 80 MB to copy, 100 MB to hash."""
    import numpy as np

    source = np.ones(10_000_000)
    return source, np.empty_like(source), bytes(100_000_000)


def _once(work: tuple) -> float:
    import numpy as np

    source, target, data = work
    t0 = time.perf_counter()
    for _ in range(6):  # memory bandwidth, as STREAM's copy
        np.copyto(target, source)
    hashlib.sha256(data).digest()  # integer work in C
    for _ in range(SPAWNS):  # fork and exec: the cost a container start repeats many times
        subprocess.run([TRUE], check=True)
    return time.perf_counter() - t0


def probe_seconds() -> float:
    work = _work()
    return min(_once(work) for _ in range(5))


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def cpu_pressure() -> float:
    """The share (%) of the last 10 s in which some task waited for a CPU; 0 where the kernel
    has no pressure files (nothing to tell busy from quiet)."""
    try:
        for line in CPU_PRESSURE.read_text().splitlines():
            if line.startswith("some"):
                return float(dict(f.split("=") for f in line.split()[1:])["avg10"])
    except (OSError, KeyError, ValueError):
        pass
    return 0.0


def machine_probe(cache: Path | None = None, now: float | None = None) -> float:
    """This machine's probe: the one kept beside the measurement lock if it is from this boot
    and at most MACHINE_MAX_AGE_S old, else measured now and kept there (where that can be
    written) if the machine was quiet while it ran (QUIET_CPU_PRESSURE); a probe of a busy
    machine serves this invocation only."""
    cache, now = cache or MACHINE_CACHE, time.time() if now is None else now
    try:
        kept = json.loads(cache.read_text())
        fresh = kept["boot_id"] == _boot_id() and 0 <= now - kept["measured"] <= MACHINE_MAX_AGE_S
        if fresh and kept.get("version") == PROBE_VERSION:
            return float(kept["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if cache in _NOT_KEPT:
        return _NOT_KEPT[cache]
    before = cpu_pressure()
    seconds = probe_seconds()
    if max(before, cpu_pressure()) > QUIET_CPU_PRESSURE:
        # Measured beside other work: slower than the machine is, so not kept for others; this
        # invocation keeps it, so that its plan and its estimate print one factor.
        _NOT_KEPT[cache] = seconds
        return seconds
    try:  # whole or not at all: a reader never sees half a file
        part = cache.with_name(f"{cache.name}.{os.getpid()}")
        part.write_text(
            json.dumps({"seconds": seconds, "measured": now, "boot_id": _boot_id(), "version": PROBE_VERSION})
            + "\n"
        )
        os.replace(part, cache)
    except OSError:
        pass  # a machine whose /tmp cannot be written measures each time
    return seconds


def cached_probe(results: Path, host: str) -> float:
    """This host's probe: the one an earlier version's budgeted plan kept beside its run ledger
    (results/durations/<host>.probe.json) if it is of this PROBE_VERSION, else this machine's
    (machine_probe)."""
    path = results / "durations" / f"{host}.probe.json"
    try:
        kept = json.loads(path.read_text())
        if kept.get("version") == PROBE_VERSION:
            return float(kept["seconds"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return machine_probe()


if __name__ == "__main__":
    print(f"{probe_seconds():.3f} s (reference machine {REFERENCE_S} s)")
