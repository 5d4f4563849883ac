"""Shared test helpers: the repository root and a check for a running engine."""

import atexit
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

# The machine's probe (host/probe.py) is kept for an hour beside the measurement lock; the tests'
# dry runs measure it while the other test process loads the CPU, so they keep theirs apart (the
# environment reaches every snakemake they start), and a later `make paper` measures its own.
_PROBE = Path(tempfile.gettempdir()) / f"interference-test-probe-{os.getpid()}.json"
os.environ.setdefault("INTERFERENCE_PROBE", str(_PROBE))
atexit.register(lambda: _PROBE.unlink(missing_ok=True))

import pytest  # noqa: E402
import yaml  # noqa: E402
from interference.host.locks import measurement_lock  # noqa: E402
from interference.runtimes import ovs  # noqa: E402
from interference.studies.pingpong import fabric  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(__import__("sys").executable).parent / "snakemake")


def keep_reference_probe(folder: Path) -> None:
    """A kept probe under folder/results saying this host is as fast as the reference machine, so
    that a budgeted plan does not depend on how busy the machine running the test is."""
    import socket

    from interference.host.probe import PROBE_VERSION, REFERENCE_S

    kept = folder / "results/durations" / f"{socket.gethostname().split('.')[0]}.probe.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps({"seconds": REFERENCE_S, "version": PROBE_VERSION}))


def docker_answers() -> bool:
    return (
        shutil.which("docker") is not None
        and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    )


requires_engine = pytest.mark.skipif(
    not docker_answers(),
    reason="no Docker engine answers (make test starts one; see scripts/ensure-engine.sh)",
)


def netns_process(seconds: int = 60) -> subprocess.Popen:
    """A process alone in a network namespace (loopback only), returned once it is in it:
    `unshare` moves before it runs `sleep`, and the test waits for that instead of guessing."""
    proc = subprocess.Popen(["unshare", "--net", "sleep", str(seconds)])
    host, deadline = os.readlink("/proc/self/ns/net"), time.time() + 30
    while os.readlink(f"/proc/{proc.pid}/ns/net") == host:
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError(f"unshare --net did not make a namespace (exit {proc.poll()})")
        time.sleep(0.01)
    return proc


def listening(argv: list[str]) -> subprocess.Popen:
    """A server started with `argv` that prints a line once it listens; returned after that line."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the server {argv} ended before it listened (exit {proc.wait()})")
    return proc


def run_label(run_id: str | None) -> str:
    return "label=interference.run" + (f"={run_id}" if run_id else "")


def leftover_containers(run_id: str | None = None) -> list[str]:
    """Docker's containers of any run, or of the run `run_id`."""
    r = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", run_label(run_id)],
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout.split()


def nothing_left() -> list[str]:
    """Every container and runtime leftover on this machine, read while no run is live: under the
    measurement lock, which a run holds from before it makes anything until its cleanup. The
    integration tests run on two processes (Makefile): the other one may be mid-run."""
    with measurement_lock():
        return leftover_containers() + runtime_leftovers()


def left_by(run_ids) -> list[str]:
    """nothing_left, less the host's leftovers that name none of the runs `run_ids` (every
    container and labelled network or volume still counts). For the exclusive tests: the unit
    tests beside them start host processes of their own (iperf3 servers, ping-pong services)
    that nothing_left would count."""
    with measurement_lock():
        containers, others = leftover_containers(), runtime_leftovers()
    named = [x for x in others if x.startswith(("docker ", "podman ")) or any(r in x for r in run_ids)]
    return containers + named


def start_run_case(settings: dict, images, meta, stdout=None) -> subprocess.Popen:
    """The generic runner's CLI as the run rule calls it for the pair study, in the background.
    Its first line on stdout, once it holds the measurement lock: "run RUN_ID: ..."."""
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
    # In the folder above the run's (its durations ledger, results/durations/, lands there: not
    # in the repository's results, where the other test process's runners would write too).
    return subprocess.Popen(
        [__import__("sys").executable, *argv, "--meta", str(meta)],
        env=env,
        stdout=stdout,
        text=True,
        cwd=Path(meta).resolve().parent.parent,
    )


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


def runtime_leftovers(run_id: str | None = None) -> list[str]:
    """What any runtime's run (or the run `run_id`: what carries its id) left: Docker's labelled
    networks and volumes; Podman's labelled containers, networks and volumes; bare metal's cgroups and mounts; LXC's and the VMs'
    commands, bridges and taps; nested children's cgroups; qemu processes; OVS switches, nested
    parents' bridges and the network study's host-side servers; the ping-pong study's hosts and
    services. (Nested parents are Docker containers: leftover_containers finds them.)"""
    left = []
    for kind in ("network", "volume"):  # Docker's containers: leftover_containers
        r = subprocess.run(
            ["docker", kind, "ls", "-q", "--filter", run_label(run_id)], capture_output=True, text=True
        )
        left += [f"docker {kind} {x}" for x in r.stdout.split()]
    if shutil.which("podman"):
        for kind in ("container", "network", "volume"):
            argv = ["podman", kind, "ls", "-q", "--filter", run_label(run_id)]
            if kind == "container":
                argv.insert(3, "-a")
            r = subprocess.run(argv, capture_output=True, text=True)
            left += [f"podman {kind} {x}" for x in r.stdout.split()]
    for pattern in ("*/interference/*", "interference/*", "*/interference-nested/*", "interference-nested/*"):
        left += [f"cgroup {p}" for p in Path("/sys/fs/cgroup").glob(pattern) if p.is_dir()]
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    left += [f"mount {line.split()[4]}" for line in mounts if "interference" in line]
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
    labelled = ("podman ", "docker ")  # found by the run's label already
    return [x for x in left if x.startswith(labelled) or run_id in x] if run_id else left


# The tests run on two processes (make test: pytest-xdist, --dist loadfile), a file with its
# module fixtures on one. The files that share this machine's Slurm daemons (munge, slurmctld,
# slurmd) count as one file (xdist's loadgroup would say so by marks, but it stopped grouping
# with pytest 9.2: pytest-xdist issue 1386). The longest start first (with
# --no-loadscope-reorder), so that the two processes end about together (docs/benchmarks.md: the slowest tests).
SHARED_DAEMONS = {"tests/test_slurm.py": "slurm", "tests/test_slurm_cluster.py": "slurm"}
LONGEST_FIRST = [
    # The unit phase's longest: the calibration simulations (130 s: in name order they came
    # last and one process ran them alone, 2026-11-29; 30-40 s since their reruns go through the
    # statistics at once), then a rendered report in Chromium and the report fixtures (taken
    # last, the browser test alone kept one process busy 35 s after the other had finished).
    "tests/test_verdict_calibration.py",
    "tests/test_report_browser.py",
    "tests/test_reporting.py",
    "tests/test_findings.py",
    # The integration phase: the Slurm files (few runs, long waits) beside the two files with the
    # most runs, then the rest longest first, so that the last files taken are short ones. With
    # the others in name order after the first three, the report-rule, sessions and transfer
    # files (227 s) came last on one process, 110 s after the other had finished (2026-11-27).
    # Which files wait on the measurement lock together matters too: ordered by time alone
    # (paper 001 beside pipeline, the Slurm files after), the phase took 709 and 742 s against
    # 652 and 689 s (2026-11-26).
    "slurm",
    "tests/test_pipeline_integration.py",
    "tests/test_paper001_integration.py",
    "tests/test_microservices_integration.py",
    "tests/test_report_rule.py",
    "tests/test_sessions_integration.py",
    "tests/test_paper003_integration.py",
    "tests/test_new_study.py",
    "tests/test_transfer.py",
]


def file_group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return SHARED_DAEMONS.get(path, path)


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileGroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return file_group(nodeid)

    return FileGroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    rank = {g: i for i, g in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(file_group(item.nodeid), len(rank)))  # stable: a file's order kept


@pytest.fixture(scope="session")
def report_fixture_made(tmp_path_factory, worker_id) -> Path:
    """The report fixture's stats set (report_fixture.make_fixture, 200 resamples), made once per
    test run: the test processes share it (it takes 10 s), each file reads its own copy
    (report_stats_copy)."""
    from report_fixture import make_fixture

    if worker_id == "master":  # one process: nothing to share
        return make_fixture(tmp_path_factory.mktemp("report-fixture") / "stats", n_resamples=200)
    root = tmp_path_factory.getbasetemp().parent  # this run's, shared by its processes
    made, done = root / "report-fixture" / "stats", root / "report-fixture.done"
    with open(root / "report-fixture.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first to come makes it, the others wait
        if not done.exists():
            shutil.rmtree(made.parent, ignore_errors=True)
            make_fixture(made, n_resamples=200)
            done.touch()
    return made


def report_stats_copy(made: Path, tmp_path_factory) -> Path:
    """A copy of the shared report fixture that a test may change."""
    return Path(shutil.copytree(made, tmp_path_factory.mktemp("stats") / "stats"))
