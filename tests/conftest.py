"""Shared test helpers: the repository root and a check for a running engine."""

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

# The machine's probe (host/probe.py) is kept for an hour beside the measurement lock; the tests'
# dry runs measure it while the other test process loads the CPU, so they keep theirs apart (the
# environment reaches every snakemake they start), and a later `make paper` measures its own.
_PROBE = Path(tempfile.gettempdir()) / f"interference-test-probe-{os.getpid()}.json"
os.environ.setdefault("INTERFERENCE_PROBE", str(_PROBE))
atexit.register(lambda: _PROBE.unlink(missing_ok=True))

import pytest  # noqa: E402
import yaml  # noqa: E402
from interference.runtimes import ovs  # noqa: E402
from interference.studies.pingpong import fabric  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(__import__("sys").executable).parent / "snakemake")


def docker_answers() -> bool:
    return (
        shutil.which("docker") is not None
        and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    )


requires_engine = pytest.mark.skipif(
    not docker_answers(),
    reason="no Docker engine answers (make test starts one; see scripts/ensure-engine.sh)",
)


def leftover_containers() -> list[str]:
    r = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", "label=interference.run"],
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout.split()


def start_run_case(settings: dict, images, meta) -> subprocess.Popen:
    """The generic runner's CLI as the run rule calls it for the pair study, in the background."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}
    argv = [
        "-m",
        "interference.steps.runner",
        "--study",
        "pairs",
        "--settings",
        json.dumps(settings),
        "--images",
        *map(str, images),
    ]
    return subprocess.Popen([__import__("sys").executable, *argv, "--meta", str(meta)], env=env)


def run_settings(case: str, pair: str, limits: dict, sizes: dict, **extra) -> dict:
    """What the run_case rule passes to the runner (see run_settings in common.smk)."""
    base = {
        "host": "testhost",
        "runtime": "docker",
        "study": "pairs",
        "key": f"case{case}/{pair}",
        "case": case,
        "pair": pair,
        "repetition": 1,
        "iteration_timeout_s": 60,
        "limits": limits,
        "sizes": sizes,
    }
    return {**base, **extra}


def run_report(workdir: Path, config: dict, timeout: float = 1800, target: str = "report/paper.html") -> None:
    """The pipeline to `target` in `workdir` on `config` (written there as tiny.yaml)."""
    (workdir / "tiny.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2", target]
        + ["--configfile", str(workdir / "tiny.yaml")],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def runtime_leftovers() -> list[str]:
    """What any runtime's run left: Podman's labelled containers, networks and volumes; bare metal's
    cgroups and mounts; LXC's and the VMs' commands, bridges and taps; nested children's cgroups;
    qemu processes; OVS switches, nested parents' bridges and the network study's host-side
    servers; the ping-pong study's hosts and services. (Nested parents are Docker containers: leftover_containers finds them.)"""
    left = []
    if shutil.which("podman"):
        for kind in ("container", "network", "volume"):
            argv = ["podman", kind, "ls", "-q", "--filter", "label=interference.run"]
            if kind == "container":
                argv.insert(3, "-a")
            r = subprocess.run(argv, capture_output=True, text=True)
            left += [f"podman {kind} {x}" for x in r.stdout.split()]
    for pattern in ("*/interference/*", "interference/*", "*/interference-nested/*", "interference-nested/*"):
        left += [f"cgroup {p}" for p in Path("/sys/fs/cgroup").glob(pattern) if p.is_dir()]
    left += [f"mount {line.split()[4]}" for line in open("/proc/self/mountinfo") if "interference" in line]
    for state in ("lxc", "vm"):
        for kind in ("commands", "networks", "volumes", "guests", "lxc"):
            folder = Path("/var/lib/interference") / state / kind
            left += [f"{state} {kind} {p.name}" for p in folder.iterdir()] if folder.is_dir() else []
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    left += [f"link {line.split(':')[1].strip()}" for line in links.splitlines() if ": it" in line]
    qemu = subprocess.run(["pgrep", "-a", "qemu-system"], capture_output=True, text=True).stdout
    left += [f"process {line}" for line in qemu.splitlines()]
    # The network study: OVS switches and their daemons, nested parents' bridges, host-side servers.
    left += [f"ovs {x}" for x in ovs.switches_left()]
    parents = Path("/var/lib/interference/nested/parents/networks")
    left += [f"nested bridge {p.name}" for p in parents.iterdir()] if parents.is_dir() else []
    servers = subprocess.run(
        ["pgrep", "-a", "-f", "iperf3 --server|sockperf server"], capture_output=True, text=True
    )
    left += [f"process {line}" for line in servers.stdout.splitlines()]
    # The ping-pong study: its hosts' namespaces, links and tinc daemons, and its services.
    left += fabric.leftovers()
    services = subprocess.run(
        ["pgrep", "-a", "-f", "microservices/HP/pingpong"], capture_output=True, text=True
    )
    left += [f"process {line}" for line in services.stdout.splitlines()]
    return left
