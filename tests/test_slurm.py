"""The workflow through Slurm (profiles/slurm, snakemake-executor-plugin-slurm): a single-node
Slurm started here for the test (Debian's slurm-wlm and munge, slurmctld and slurmd run
directly: no systemd), a tiny pair study submitted through it — each run a Slurm job on the node
its host names, exclusive —, the same results as a local run, parsed locally; and the refusals before anything
runs: a host that is not a node, no controller answering. Everything started is stopped."""

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, nothing_left, requires_engine
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


def test_the_runs_are_slurm_jobs_with_a_local_runs_results(slurm, tmp_path):
    (tmp_path / "tiny.yaml").write_text(
        yaml.safe_dump({"host": NODE, "runtimes": ["docker"], "studies": {"pairs": PAIRS}})
    )
    profile = ["--profile", str(REPO / "profiles" / "slurm")]
    r = snakemake(tmp_path, slurm, *profile, "raw")  # the runs (parsing and report are local rules)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = sorted(p.parent.relative_to(tmp_path) for p in tmp_path.glob("results/raw/**/meta.json"))
    assert [str(p) for p in runs] == [f"results/raw/{NODE}/docker/pairs/case1/L/rep1"]  # as a local run
    meta = json.loads((tmp_path / runs[0] / "meta.json").read_text())
    assert meta["n_failed"] == 0 and meta["n_iterations"] == 2
    # The builds and the run went to Slurm as one job (the host's group), with its log.
    rules = {p.name for p in (tmp_path / ".snakemake/slurm_logs").iterdir()}
    assert rules == {"group_node_build_image_run"}, rules
    assert len(list((tmp_path / ".snakemake/slurm_logs").rglob("*.log"))) == 1
    # Parsing is a local rule: it runs here, on the run's files, without Slurm.
    r = snakemake(tmp_path, slurm, *profile, "results/parsed/pairs/samples.tsv")
    assert r.returncode == 0 and "submitted with SLURM jobid" not in r.stdout + r.stderr
    assert nothing_left() == []


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
