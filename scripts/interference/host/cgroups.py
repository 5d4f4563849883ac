"""cgroups made by the runner itself (the bare-metal runtime): one group per command, with the
limits of its case, on cgroup v1 (a folder per controller) or v2 (one unified folder).

Everything lives under an `interference` group, so that what a run left is easy to find."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT = "interference"
V1_CONTROLLERS = ("cpuset", "cpu", "memory")
CFS_PERIOD_US = 100_000


def version(root: Path = ROOT) -> int:
    return 2 if (root / "cgroup.controllers").exists() else 1


def memory_bytes(text: str) -> int:
    """Docker's notation (512m, 2g, 1073741824) in bytes."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    s = str(text).strip().lower()
    return int(float(s[:-1]) * units[s[-1]]) if s[-1] in units else int(float(s))


def plan(name: str, cpuset: str | None, cpus: float | None, memory: str | None, v: int) -> dict[Path, dict]:
    """The folders to make and the files to write in each, in order: {folder: {file: value}}."""
    mem = memory_bytes(memory) if memory else None
    if v == 1:
        out: dict[Path, dict] = {}
        out[ROOT / "cpuset" / PARENT / name] = {"cpuset.cpus": cpuset, "cpuset.mems": None}
        out[ROOT / "cpu" / PARENT / name] = (
            {"cpu.cfs_period_us": str(CFS_PERIOD_US), "cpu.cfs_quota_us": str(int(cpus * CFS_PERIOD_US))}
            if cpus
            else {}
        )
        # The memory limit first: memsw (memory + swap) may never be below it. Same value: no swap,
        # as docker's --memory-swap equal to --memory.
        out[ROOT / "memory" / PARENT / name] = (
            {"memory.limit_in_bytes": str(mem), "memory.memsw.limit_in_bytes": str(mem)} if mem else {}
        )
        return out
    files = {}
    if cpuset:
        files["cpuset.cpus"] = cpuset
    if cpus:
        files["cpu.max"] = f"{int(cpus * CFS_PERIOD_US)} {CFS_PERIOD_US}"
    if mem:
        files["memory.max"] = str(mem)
        files["memory.swap.max"] = "0"
    return {ROOT / PARENT / name: files}


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _prepare_parents(v: int) -> None:
    if v == 1:
        for ctrl in V1_CONTROLLERS:
            (ROOT / ctrl / PARENT).mkdir(exist_ok=True)
        # A cpuset group takes no task until it has cores and memory nodes: copy the root's.
        for f in ("cpuset.cpus", "cpuset.mems"):
            path = ROOT / "cpuset" / PARENT / f
            if not path.read_text().strip():
                _write(path, (ROOT / "cpuset" / f).read_text().strip())
        return
    (ROOT / PARENT).mkdir(exist_ok=True)
    for folder in (ROOT, ROOT / PARENT):
        available = (folder / "cgroup.controllers").read_text().split()
        wanted = [c for c in ("cpuset", "cpu", "memory") if c in available]
        _write(folder / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))


def create(name: str, cpuset=None, cpus=None, memory=None) -> list[Path]:
    """Make the groups of one command with its limits; the folders made."""
    v = version()
    _prepare_parents(v)
    folders = []
    for folder, files in plan(name, cpuset, cpus, memory, v).items():
        folder.mkdir()
        folders.append(folder)
        for file, value in files.items():
            if not (folder / file).exists():
                continue  # e.g. memsw without swap accounting
            if value is None:  # v1 cpuset needs its cores and nodes set: the parent's
                value = (folder.parent / file).read_text().strip()
            _write(folder / file, value)
    return folders


def join(folders: list[Path], pid: int) -> None:
    for folder in folders:
        _write(folder / "cgroup.procs", str(pid))


def folders_of(name: str) -> list[Path]:
    if version() == 1:
        return [p for ctrl in V1_CONTROLLERS if (p := ROOT / ctrl / PARENT / name).is_dir()]
    return [p for p in [ROOT / PARENT / name] if p.is_dir()]


def pids(folders: list[Path]) -> set[int]:
    out = set()
    for folder in folders:
        with contextlib.suppress(FileNotFoundError):
            out |= {int(x) for x in (folder / "cgroup.procs").read_text().split()}
    return out


def kill_and_remove(name: str, grace_s: float = 5.0) -> list[Path]:
    """SIGKILL every process in the command's groups until none is left, then remove them."""
    folders = folders_of(name)
    deadline = time.time() + grace_s
    while (left := pids(folders)) and time.time() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    for folder in folders:
        folder.rmdir()
    return folders


def names() -> set[str]:
    """Every command group under the parent (to find what a run left)."""
    parents = [ROOT / c / PARENT for c in V1_CONTROLLERS] if version() == 1 else [ROOT / PARENT]
    return {p.name for parent in parents if parent.is_dir() for p in parent.iterdir() if p.is_dir()}


def process_folders(proc_cgroup: str, root: Path = ROOT) -> dict[str, Path]:
    """controller (cpu, cpuacct, memory; or "v2") -> a process's cgroup folder, from its
    /proc/<pid>/cgroup text; a controller whose cgroup is the root (the machine's) is left out."""
    lines = [line.split(":", 2) for line in proc_cgroup.splitlines()]
    if len(lines) == 1 and lines[0][1] == "":  # v2 alone (a v1 machine lists an empty "0::" too)
        path = lines[0][2]
        return {"v2": root / path.lstrip("/")} if path != "/" else {}  # the root: as on v1
    dirs = {}
    for _, controllers, path in lines:
        if controllers and path != "/":  # in a controller's root cgroup the counters are the machine's
            dirs |= {c: root / controllers / path.lstrip("/") for c in controllers.split(",")}
    return {c: d for c, d in dirs.items() if c in ("cpu", "cpuacct", "memory")}
