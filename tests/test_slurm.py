"""The workflow through Slurm (profiles/slurm, snakemake-executor-plugin-slurm) refused before
anything runs: a single-node Slurm started here for the test (Debian's slurm-wlm and munge,
slurmctld and slurmd run directly: no systemd), a host that is not a node, no controller
answering. Everything started is stopped. Runs submitted through Slurm, each on the node its host
names, parsed locally, are test_slurm_cluster.py's (two nodes: this machine and a container)."""

import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, requires_engine
from support.slurm_local import LocalCluster

pytestmark = [
    pytest.mark.integration,
    requires_engine,
    pytest.mark.skipif(shutil.which("slurmctld") is None, reason="slurm-wlm is not installed"),
]

NODE = socket.gethostname().split(".")[0]
PAIRS = {
    "microservices": ["L"],
    "cases": ["1"],
    "iterations": 2,
    "window_s": {"3b": 4},
    "iteration_timeout_s": 60,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    "sizes": {"L": {"n": 600}},
}


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """The environment (SLURM_CONF) of a running single-node Slurm, stopped after the tests."""
    node = LocalCluster(tmp_path_factory.mktemp("slurm"))
    if node.conf.exists():
        pytest.skip(f"{node.conf} exists: this machine has a Slurm of its own")
    with node as env:
        yield env
    assert node.daemons() == [] and not node.conf.exists()


def snakemake(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
        + ["--configfile", str(workdir / "tiny.yaml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


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
