"""A short probe of this machine's speed, for the time estimate on a host with no history.

The studies' models of a run (containers/iteration-times.yaml, start costs) were measured on
one machine; another runs them faster or slower. Before the first run on a host never seen, the
estimate scales them by the ratio of this probe's time here to its time on the reference
machine (REFERENCE_S): a fixed CPU loop in Python and a burst of process starts (what a
container's start is made of), the fastest of five. Kept for this machine beside the
measurement lock (at most an hour, this boot), so that every snakemake
invocation in any working folder, a dry run included, does not measure it again (2-5 s here)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from interference.host.locks import LOCK_PATH

# The probe's seconds on the machine whose run times calibrated the models. That machine is
# gone; on the 2-core VM of docs/configs.md its runs took 1.35 times the pair study's models (138
# runs of the default) and this probe 0.195 s (the median of five), so the reference is
# 0.195 / 1.35. The other studies' constants (containers/entity-times.yaml) are in the same units.
REFERENCE_S = 0.144
SPAWNS = 40
# This machine's probe, shared by every working folder; older than MACHINE_MAX_AGE_S or from
# another boot, it is measured again (the machine's load moves it).
MACHINE_CACHE = Path(os.environ.get("INTERFERENCE_PROBE", LOCK_PATH + ".probe.json"))
MACHINE_MAX_AGE_S = 3600
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _once() -> float:
    t0 = time.perf_counter()
    x = 0
    for i in range(3_000_000):  # fixed integer work: an interpreter's speed on one core
        x += i * i % 7
    for _ in range(SPAWNS):  # fork and exec: the cost a container start repeats many times
        subprocess.run(["true"], check=True)
    return time.perf_counter() - t0


def probe_seconds() -> float:
    return min(_once() for _ in range(5))


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def machine_probe(cache: Path | None = None, now: float | None = None) -> float:
    """This machine's probe: the one kept beside the measurement lock if it is from this boot
    and at most MACHINE_MAX_AGE_S old, else measured now and kept there (where that can be
    written)."""
    cache, now = cache or MACHINE_CACHE, time.time() if now is None else now
    try:
        kept = json.loads(cache.read_text())
        if kept["boot_id"] == _boot_id() and 0 <= now - kept["measured"] <= MACHINE_MAX_AGE_S:
            return float(kept["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    seconds = probe_seconds()
    try:  # whole or not at all: a reader never sees half a file
        part = cache.with_name(f"{cache.name}.{os.getpid()}")
        part.write_text(json.dumps({"seconds": seconds, "measured": now, "boot_id": _boot_id()}) + "\n")
        os.replace(part, cache)
    except OSError:
        pass  # a machine whose /tmp cannot be written measures each time
    return seconds


def cached_probe(results: Path, host: str) -> float:
    """This host's probe: the one an earlier version's budgeted plan kept beside its run ledger
    (results/durations/<host>.probe.json), else this machine's (machine_probe)."""
    path = results / "durations" / f"{host}.probe.json"
    try:
        return float(json.loads(path.read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return machine_probe()


if __name__ == "__main__":
    print(f"{probe_seconds():.3f} s (reference machine {REFERENCE_S} s)")
