"""The workflow through Slurm (profiles/slurm, snakemake-executor-plugin-slurm): a single-node
Slurm started here for the test (Debian's slurm-wlm and munge, slurmctld and slurmd run
directly: no systemd), a tiny pair study submitted through it — each run a Slurm job on the node
its host names, exclusive —, the same results as a local run; and the refusals before anything
runs: a host that is not a node, no controller answering. Everything started is stopped."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE, leftover_containers, requires_engine, runtime_leftovers

pytestmark = [
    pytest.mark.integration,
    requires_engine,
    pytest.mark.skipif(shutil.which("slurmctld") is None, reason="slurm-wlm is not installed"),
]

NODE = socket.gethostname().split(".")[0]
PAIRS = {
    "microservices": ["L"],
    "cases": ["1", "3b"],
    "iterations": 2,
    "window_s": {"3b": 4},
    "iteration_timeout_s": 60,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    "sizes": {"L": {"n": 600}},
}


def slurm_conf(state: Path) -> str:
    return "\n".join(
        [
            "ClusterName=interference-test",
            f"SlurmctldHost={NODE}",
            "AuthType=auth/munge",
            "ProctrackType=proctrack/linuxproc",  # no cgroup plugin: the runtimes own the cgroups
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={state}/state",
            f"SlurmdSpoolDir={state}/spool",
            f"SlurmctldPidFile={state}/slurmctld.pid",
            f"SlurmdPidFile={state}/slurmd.pid",
            f"SlurmctldLogFile={state}/slurmctld.log",
            f"SlurmdLogFile={state}/slurmd.log",
            "ReturnToService=2",
            "MinJobAge=600",  # squeue keeps finished jobs long enough for the status checks
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "MpiDefault=none",
            f"NodeName={NODE} CPUs={os.cpu_count()} State=UNKNOWN",
            "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
    )


def munge_answers() -> bool:
    r = subprocess.run("munge -n | unmunge", shell=True, capture_output=True)
    return r.returncode == 0


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """SLURM_CONF of a running single-node Slurm; stopped (and munged, if started here) after."""
    state = tmp_path_factory.mktemp("slurm")
    (state / "state").mkdir(), (state / "spool").mkdir()
    conf = state / "slurm.conf"
    conf.write_text(slurm_conf(state) + "\n")
    started_munge = None
    if not munge_answers():
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            subprocess.run(
                ["dd", "if=/dev/urandom", f"of={key}", "bs=1024", "count=1"], check=True, capture_output=True
            )
            shutil.chown(key, "munge", "munge"), key.chmod(0o400)
        Path("/run/munge").mkdir(exist_ok=True), shutil.chown("/run/munge", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True)
        started_munge = int(Path("/run/munge/munged.pid").read_text())
    subprocess.run(["slurmctld", "-f", str(conf)], check=True)
    subprocess.run(["slurmd", "-f", str(conf)], check=True)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    deadline = time.time() + 60
    while (
        "idle"
        not in subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout
    ):
        assert time.time() < deadline, (state / "slurmctld.log").read_text()[-2000:]
        time.sleep(0.5)
    yield env
    subprocess.run(["scancel", "--full", "-u", "root"], env=env, capture_output=True)
    for daemon in ("slurmd", "slurmctld"):
        pid = state / f"{daemon}.pid"
        if pid.exists():
            os.kill(int(pid.read_text()), signal.SIGTERM)
    if started_munge:
        os.kill(started_munge, signal.SIGTERM)
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", f"slurm(ctld|d) -f {conf}"], capture_output=True, text=True).stdout
    assert left == "", left


def snakemake(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
        + ["--configfile", str(workdir / "tiny.yaml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def test_the_runs_are_slurm_jobs_with_a_local_runs_results(slurm, tmp_path):
    (tmp_path / "tiny.yaml").write_text(
        yaml.safe_dump({"host": NODE, "runtimes": ["docker"], "studies": {"pairs": PAIRS}})
    )
    profile = ["--profile", str(REPO / "profiles" / "slurm")]
    t0 = time.time()
    r = snakemake(tmp_path, slurm, *profile, "report/paper.html")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = sorted(p.parent.relative_to(tmp_path) for p in tmp_path.glob("results/raw/**/meta.json"))
    assert [str(p) for p in runs] == [
        f"results/raw/{NODE}/docker/pairs/{k}/rep1" for k in ("case1/L", "case3b/L+L")
    ]
    meta = json.loads((tmp_path / runs[1] / "meta.json").read_text())
    assert meta["n_failed"] == 0 and all(m["n_in_overlap"] >= 1 for m in meta["members"].values())
    # Each run went to Slurm (a job log per run); nothing else did.
    logs = sorted(p.parent.name for p in tmp_path.glob(".snakemake/slurm_logs/rule_*/**/*.log"))
    assert {p.split("/")[0] for p in logs} == {"run"} or logs, logs
    assert {p.parts[2] for p in tmp_path.glob(".snakemake/slurm_logs/*/*") if p.parts} != set()
    rules = {p.name for p in (tmp_path / ".snakemake/slurm_logs").iterdir()}
    assert rules == {"rule_run", "rule_build_image"}, rules
    assert (tmp_path / "report/paper.html").exists() and time.time() - t0 < 1200
    assert leftover_containers() == [] and runtime_leftovers() == []


def test_a_host_that_is_no_node_or_no_controller_is_refused(slurm, tmp_path):
    (tmp_path / "tiny.yaml").write_text(
        yaml.safe_dump({"host": "nonode", "runtimes": ["docker"], "studies": {"pairs": PAIRS}})
    )
    profile = ["--profile", str(REPO / "profiles" / "slurm")]
    r = snakemake(tmp_path, slurm, *profile, "report/paper.html")
    assert (
        r.returncode != 0
        and f"the config's host 'nonode' is not a Slurm node (nodes: {NODE})" in r.stderr + r.stdout
    )
    dead = tmp_path / "dead.conf"
    dead.write_text(
        Path(slurm["SLURM_CONF"]).read_text() + "SlurmctldPort=6999\nMessageTimeout=2\n"
    )  # nobody there
    r = snakemake(tmp_path, {**slurm, "SLURM_CONF": str(dead)}, *profile, "report/paper.html")
    assert r.returncode != 0 and "no Slurm controller answer" in r.stderr + r.stdout
    assert not (tmp_path / "results" / "raw").exists()
