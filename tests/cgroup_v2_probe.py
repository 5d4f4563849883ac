"""The cgroup v2 paths of our code, run for real: python3 inside a `vm` guest booted with the
unified hierarchy (runtime option guest_cgroup: v2), started by tests/test_cgroup_v2_guest.py.

    python3 cgroup_v2_probe.py REPO OUT_JSON

As the bare-metal runtime does: makes a cgroup with cgroups.create (cpuset 0, half a core,
64 MiB), runs containers/base/microservice-loop joined to it (its limit read-back, no
iteration), a busy child joined to it under telemetry's Sampler and two direct readings of its
counters, a child that overruns the memory limit, then cgroups.kill_and_remove with the busy
child still running. What it saw goes to OUT_JSON, the Sampler's rows to telemetry.tsv beside
it. The guest has Debian's python3-minimal only (no json, yaml, numpy or pandas)."""

import importlib.util
import os
import subprocess
import sys
import time
import traceback
import types
from pathlib import Path

NAME = "v2probe"
BUSY = "while True: pass"
HOG = "b = b'x' * (128 << 20)"  # written, so charged: twice the limit


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_ours(repo: Path):
    """host/cgroups.py and host/telemetry.py from their files, under empty packages (no __init__
    runs). Both need only the standard library (python3-minimal's): the sampler that runs beside
    a measurement imports no numpy or pandas (its rates are host/telemetry_rates.py's)."""
    for name in ("interference", "interference.host"):
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__path__ = []
    src = repo / "scripts" / "interference" / "host"
    cgroups = load("interference.host.cgroups", src / "cgroups.py")
    telemetry = load("interference.host.telemetry", src / "telemetry.py")
    return cgroups, telemetry


def to_json(v) -> str:
    """python3-minimal has no json module: enough of one for what is written here."""
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c >= " " and c not in '"\\' else f"\\u{ord(c):04x}" for c in v) + '"'
    if isinstance(v, dict):
        return "{" + ", ".join(f"{to_json(str(k))}: {to_json(x)}" for k, x in v.items()) + "}"
    return "[" + ", ".join(to_json(x) for x in v) + "]"


def text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError as e:
        return f"unreadable: {e}"


def probe(repo: Path, out: Path, seen: dict) -> None:
    cgroups, telemetry = load_ours(repo)
    root = cgroups.ROOT
    seen["cgroup_version"] = cgroups.version()
    seen["cmdline"] = text(Path("/proc/cmdline"))
    seen["mounts"] = [line for line in text(Path("/proc/mounts")).splitlines() if "cgroup" in line]
    seen["nproc"] = os.cpu_count()
    seen["root_cpuset"] = text(root / "cpuset.cpus.effective")
    # This process sits in the root group, whose counters are the machine's: no entity folders.
    seen["root_process_folders"] = {
        k: str(v) for k, v in cgroups.process_folders(text(Path("/proc/self/cgroup"))).items()
    }

    folders = cgroups.create(NAME, cpuset="0", cpus=0.5, memory="64m")
    seen["folders"] = [str(f) for f in folders]
    files = ("cpuset.cpus", "cpu.max", "memory.max", "memory.swap.max")
    seen["written"] = {f: text(folders[0] / f) for f in files}
    seen["subtree_control"] = {
        str(p): text(p / "cgroup.subtree_control") for p in (root, root / "interference")
    }
    seen["names_after_create"] = sorted(cgroups.names())

    def join() -> None:  # between fork and exec, as the bare-metal runtime starts a command
        cgroups.join(folders, os.getpid())

    # The in-container read-back: the loop itself, with no iteration (count 0, start at epoch 0).
    loop_out = out.parent / "loop"
    loop = repo / "containers" / "base" / "microservice-loop"
    argv = ["sh", str(loop), "none", str(loop_out), "1", "0", "count", "0", "30"]
    subprocess.run(argv, preexec_fn=join, check=True, timeout=120)
    seen["limits"] = dict(line.split("=", 1) for line in (loop_out / "limits.txt").read_text().splitlines())

    busy = subprocess.Popen([sys.executable, "-c", BUSY], preexec_fn=join)
    seen["busy_proc_cgroup"] = text(Path(f"/proc/{busy.pid}/cgroup"))
    dirs = cgroups.process_folders(seen["busy_proc_cgroup"])
    seen["busy_process_folders"] = {k: str(v) for k, v in dirs.items()}
    with telemetry.Sampler(out.parent / "telemetry.tsv", 0.5, lambda name: busy.pid) as sampler:
        sampler.watch("busy")
        sampler.wait_samples()  # the interval read below starts after a sample of busy
        seen["counters_first"] = telemetry.cgroup_counters(dirs)
        seen["first_at"] = time.time()
        time.sleep(2.5)  # 25 CFS periods: a busy loop on half a core is throttled in each
        seen["counters_second"] = telemetry.cgroup_counters(dirs)
        seen["second_at"] = time.time()
        hog = subprocess.run([sys.executable, "-c", HOG], preexec_fn=join, timeout=300)
        seen["hog_returncode"] = hog.returncode
        seen["counters_after_hog"] = telemetry.cgroup_counters(dirs)
        seen["memory_events"] = text(folders[0] / "memory.events")
        # Removed with the busy child still running, as at the end of a run.
        seen["removed"] = [str(f) for f in cgroups.kill_and_remove(NAME)]
        seen["removed_at"] = time.time()
        sampler.wait_samples()  # the host goes on, the entity not
    seen["samples"] = sampler.samples
    seen["sampler_still_watching"] = sorted(sampler.dirs)
    seen["busy_returncode"] = busy.wait(timeout=30)
    seen["folders_left"] = [f for f in seen["folders"] if Path(f).exists()]
    seen["names_at_end"] = sorted(cgroups.names())


def main() -> int:
    repo, out = Path(sys.argv[1]), Path(sys.argv[2])
    seen: dict = {}
    try:
        probe(repo, out, seen)
    except Exception:
        seen["error"] = traceback.format_exc()
    out.write_text(to_json(seen) + "\n")
    print(to_json(seen))  # on the guest's console: the runtime's log
    return 1 if "error" in seen else 0


if __name__ == "__main__":
    sys.exit(main())
