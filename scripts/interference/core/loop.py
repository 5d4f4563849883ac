"""The microservice-loop protocol (containers/base/microservice-loop), shared by the studies that
run benchmark iterations in their entities: the loop's arguments, the start file that releases
concurrent entities together, and the iterations and limits each loop writes back.

  <outdir>/start_at           "START_EPOCH END_EPOCH", written once every entity runs
  <outdir>/<dir>/iterations.tsv  iteration, start, end, exit code, the cgroup's CPU time (ns)
                                 before and after (written by the loop; older loops: 4 columns)
  <outdir>/<dir>/iterNNNN.out    raw stdout of each iteration (.err: stderr)
  <outdir>/<dir>/limits.txt      limits as read back inside"""

from __future__ import annotations

import time
from pathlib import Path

RESULTS_IN_CONTAINER = "/results"  # where the run's raw folder is mounted in every entity
START_FILE = "start_at"
# From the last entity's start to the window's: every loop waits for the start file by then (a
# loop reaches its wait within 0.25 s of its start even in a TCG guest).
START_MARGIN_S = 0.5
RELEASED_BY_FILE = f"@{RESULTS_IN_CONTAINER}/{START_FILE}"
# A held run (a study's `hold`): its entities wait until someone writes this file into the run's
# raw folder, so that a test or a person acts on a run at a point they choose, not a race.
RELEASE_FILE = "release"
HELD_BY_FILE = f"@{RESULTS_IN_CONTAINER}/{RELEASE_FILE}"


def loop_command(
    ms_id: str, member_dir: str, first: int, start: float | str, mode: str, bound: float, timeout_s: float
) -> list[str]:
    """microservice-loop's arguments; `start` is an epoch or "@file" (see the loop's header)."""
    return [
        "microservice-loop",
        ms_id,
        f"{RESULTS_IN_CONTAINER}/{member_dir}",
        str(first),
        start if isinstance(start, str) else f"{start:.3f}",
        mode,
        f"{bound:.3f}" if mode == "until" else str(int(bound)),
        f"{timeout_s:g}",
    ]


def release_time() -> float:
    """When loops released now start: START_MARGIN_S from now (every entity already runs, however
    long its runtime took to start it: a VM's boot, a nested engine), in milliseconds."""
    return round(time.time() + START_MARGIN_S, 3)


def write_start_file(outdir: Path, window_s: float = 0, start_at: float | None = None) -> tuple[float, float]:
    """Release the waiting loops: start at `start_at` (default release_time()), end `window_s`
    later. The loop sleeps to the start and compares `date +%s.%N` with the end."""
    start_at = release_time() if start_at is None else start_at
    end = start_at + window_s
    move_window_end(outdir, start_at, end)
    return start_at, end


def move_window_end(outdir: Path, start_at: float, end: float) -> None:
    """(Re)write the start file; the loops read the end again before each iteration."""
    tmp = outdir / f"{START_FILE}.tmp"
    tmp.write_text(f"{start_at:.3f} {end:.3f}\n")
    tmp.rename(outdir / START_FILE)  # appears whole


def release(outdir: Path) -> None:
    """Let a held run go on (what a test or a person does; the loop reads START END from it)."""
    tmp = outdir / f"{RELEASE_FILE}.tmp"
    tmp.write_text("0 0\n")
    tmp.rename(outdir / RELEASE_FILE)


def wait_for_release(outdir: Path, seconds: float) -> bool:
    """Hold a run on the host side until the release file appears (True) or `seconds` pass."""
    deadline = time.time() + seconds
    while not (outdir / RELEASE_FILE).exists():
        if time.time() >= deadline:
            return False
        time.sleep(0.1)
    return True


def status_of(exit_code: int, seconds: float, timeout_s: float) -> str:
    if exit_code == 0:
        return "ok"
    # timeout(1) exits 124, or 137 when it had to KILL; 137 before the timeout is another
    # SIGKILL, usually the cgroup's out-of-memory killer.
    if exit_code == 124 or (exit_code == 137 and seconds >= timeout_s):
        return "timeout"
    if exit_code == 137:
        return "killed (exit 137, out of memory?)"
    return f"exit {exit_code}"


def read_limits(path: Path) -> dict:
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _cpu_cores(cpu: list[str], seconds: float) -> dict:
    """{"own_cpu_cores": CPUs' worth used over the iteration} from the loop's two cgroup CPU
    times; {} where the loop could not read them (or an older loop wrote none)."""
    try:
        c0, c1 = (int(c) for c in cpu)
    except ValueError:
        return {}
    return {"own_cpu_cores": (c1 - c0) / 1e9 / seconds} if seconds > 0 and c1 >= c0 else {}


def read_iterations(member_dir: Path, timeout_s: float) -> list[dict]:
    path = member_dir / "iterations.tsv"
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            it, start, end, rc, *cpu = line.split("\t")
            name = f"iter{int(it):04d}"
            t0, t1 = float(start), float(end)
            out.append(
                {
                    **_cpu_cores(cpu, t1 - t0),
                    "iteration": int(it),
                    "start": t0,
                    "end": t1,
                    "exit_code": int(rc),
                    "status": status_of(int(rc), t1 - t0, timeout_s),
                    "stdout": f"{member_dir.name}/{name}.out",
                    "stderr": f"{member_dir.name}/{name}.err",
                }
            )
    return out
