"""A two-node Slurm made on this machine (support.slurm_local): node `fog` (this machine)
and node `edge` (a container with its own Docker engine and slurmd, 1 core, 4 GiB), sharing the
working folder. One invocation with profiles/slurm runs each host's runs on its own node and
writes the two-host report; a node that does not take jobs is refused before anything is
submitted; a node lost mid-study fails its running run, keeps every finished run, and the same
command resumes the rest once the node is back, reaping what the lost run left."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, nothing_left, requires_engine
from interference.core.loop import release
from support.edge_node import EdgeNode
from support.slurm_local import DEFAULT_CONF, MUNGE_KEY, LocalCluster, images_for

pytestmark = [
    pytest.mark.integration,
    requires_engine,
    pytest.mark.skipif(shutil.which("slurmctld") is None, reason="slurm-wlm is not installed"),
]

PAIRS = {
    "microservices": ["L"],
    "cases": ["1"],
    "iterations": 2,
    "iteration_timeout_s": 120,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    "sizes": {"L": {"n": 600}},
}
CONFIG = {
    "run_on": ["fog", "edge"],
    "runtimes": ["docker"],
    "studies": {"pairs": PAIRS},
    "hosts": {"edge": {"studies": {"pairs": {"sizes": {"L": {"n": 400}}}}}},
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(environment, edge node, shared working folder) of a running two-node Slurm."""
    if DEFAULT_CONF.exists():
        pytest.skip(f"{DEFAULT_CONF} exists: this machine has a Slurm of its own")
    work = tmp_path_factory.mktemp("shared")
    # This machine's images of the study, as the edge's engine will hold them.
    images = tmp_path_factory.mktemp("images")
    (images / "cluster.yaml").write_text(yaml.safe_dump(CONFIG))
    edge = EdgeNode(shared=[work], preload=images_for(images / "cluster.yaml", images))
    cluster = LocalCluster(tmp_path_factory.mktemp("slurm"), node="fog", edge=edge)
    with cluster as env:
        yield env, edge, work, cluster
    assert cluster.daemons() == [] and not DEFAULT_CONF.exists()
    r = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=interference.slurm-node"],
        capture_output=True,
        text=True,
    )
    assert r.stdout.split() == []  # the edge node is gone with its engine
    assert not list(Path("/sys/fs/cgroup").glob("*/interference-node-edge"))


def snakemake(workdir: Path, env: dict, *args: str, config: dict = CONFIG, **kw):
    (workdir / "cluster.yaml").write_text(yaml.safe_dump(config))
    argv = [
        SNAKEMAKE,
        "-s",
        str(REPO / "Snakefile"),
        "-d",
        str(workdir),
        "--profile",
        str(REPO / "profiles/slurm"),
    ]
    return subprocess.run(
        argv + [*args, "--configfile", str(workdir / "cluster.yaml")],
        env=env, capture_output=True, text=True, timeout=1800, **kw,
    )  # fmt: skip


def each_host_ran_on_its_node_and_both_are_reported(work: Path, edge: EdgeNode) -> None:
    """What one invocation over two hosts gives: each host's run measured on its own node with its
    own sizes, its images built and recorded there, a host's builds and runs one Slurm job (a job
    group) on its node, the two-host report."""
    for host, n, cores in (("fog", 600, 2), ("edge", 400, 1)):
        meta = json.loads((work / f"results/raw/{host}/docker/pairs/case1/L/rep1/meta.json").read_text())
        assert meta["n_failed"] == 0 and meta["settings"]["sizes"]["L"]["n"] == n
        # Measured on its node: the edge container's hostname and its one core.
        assert meta["host_info"]["hostname"] == ("edge" if host == "edge" else socket_hostname())
        assert meta["host_info"]["cores"] == cores, meta["host_info"]
        record = json.loads((work / f"results/images/{host}/docker/L.json").read_text())
        assert record["id"]  # each node's engine holds its own image, recorded per host
    # A host's images and runs were one Slurm job on its node; nothing was exported or imported.
    logs = work / ".snakemake/slurm_logs"
    assert {p.name for p in logs.iterdir()} == {"group_node_build_image_run"}
    assert not (work / "results/imported").exists()
    html = (work / "report/paper.html").read_text()
    assert "fog: 1 run over" in html and "edge: 1 run over" in html
    assert nothing_left() == []
    assert edge.exec("docker", "ps", "-aq").stdout.split() == []


def socket_hostname() -> str:
    import socket

    return socket.gethostname().split(".")[0]


def test_a_node_that_cannot_see_the_folder_or_lacks_a_runtime_is_refused_before_any_job(cluster, tmp_path):
    env, edge, shared, _ = cluster
    r = snakemake(tmp_path, env, "report/paper.html")  # a folder only this machine has
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"node 'edge': edge does not see the working folder {tmp_path}" in out, out[
        -3000:
    ]
    work = shared / "podman"
    work.mkdir()
    r = snakemake(work, env, "report/paper.html", config={**CONFIG, "runtimes": ["podman"]})
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "node 'edge': runtime 'podman' does not answer on edge" in out, out[-3000:]
    for folder in (tmp_path, work):
        assert not (folder / "results/raw").exists() and not (folder / ".snakemake/slurm_logs").exists()


def test_a_node_with_another_munge_key_takes_no_jobs_and_is_refused_before_anything_is_submitted(cluster):
    env, edge, shared, local = cluster
    work = shared / "refused"
    work.mkdir()
    edge.use_munge_key(os.urandom(1024))  # not the controller's: the node cannot talk to it
    try:
        deadline = time.time() + 120  # the controller notices a silent node after SlurmdTimeout
        while (
            time.time() < deadline
            and "edge idle"
            in subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%N %t"], env=env, capture_output=True, text=True
            ).stdout
        ):
            time.sleep(2)
        r = snakemake(work, env, "report/paper.html")
        out = r.stdout + r.stderr
        assert r.returncode != 0 and "node 'edge' takes no jobs" in out and "munge key" in out, out[-3000:]
        assert not (work / "results/raw").exists()
        assert not (work / ".snakemake/slurm_logs").exists()  # no job was submitted
    finally:
        edge.use_munge_key(MUNGE_KEY.read_bytes())
        local.wait_ready(["fog", "edge"], seconds=180)


def labelled_on(edge: EdgeNode, running: bool = False) -> list[str]:
    state = ["--filter", "status=running"] if running else []
    return edge.exec("docker", "ps", "-aq", "--filter", "label=interference.run", *state).stdout.split()


def start_snakemake(work: Path, env: dict, config: dict, *args: str) -> subprocess.Popen:
    (work / "cluster.yaml").write_text(yaml.safe_dump(config))
    return subprocess.Popen(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(work), "--profile", str(REPO / "profiles/slurm"),
         "report/paper.html", *args, "--configfile", str(work / "cluster.yaml")],  # (--resources takes a list)
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def held_on(edge: EdgeNode, proc: subprocess.Popen, local: LocalCluster, besides: list[str] = ()) -> str:
    """The edge's held run's container (config hold: it waits for its release file, so it stays
    running until the test acts: nothing here races the run)."""
    deadline = time.time() + 600
    while proc.poll() is None and time.time() < deadline:
        held = [c for c in labelled_on(edge, running=True) if c not in besides]
        if held:
            return held[0]
        time.sleep(0.5)
    proc.kill()
    # A job the edge's slurmd could not start leaves no job log: its own log says why.
    slurmd = (local.state / f"slurmd-{edge.name}.log").read_text()[-2000:]
    pytest.fail(f"the edge's held run never started:\n{proc.communicate()[0][-4000:]}\nslurmd:\n{slurmd}")


def test_a_node_lost_mid_study_fails_its_run_keeps_the_rest_and_the_same_command_resumes(cluster):
    """Also the two-host invocation itself: the resumed command ends with each host's run
    measured on its node and the two-host report (one pipeline for both: the suite's budget)."""
    env, edge, shared, local = cluster
    local.wait_ready(["fog", "edge"])  # both nodes take jobs before one is lost
    work = shared / "lost"
    work.mkdir()
    # The edge's run holds in its first container until the test releases it (pairs.hold).
    config = {**CONFIG, "hosts": {"edge": {"studies": {"pairs": {"hold": True, "sizes": {"L": {"n": 400}}}}}}}
    edge_meta = work / "results/raw/edge/docker/pairs/case1/L/rep1/meta.json"
    fog_meta = work / "results/raw/fog/docker/pairs/case1/L/rep1/meta.json"
    # Both nodes' jobs at once (the profile's measurement=1 would queue fog's behind the held
    # run): fog's waits on the measurement lock, which the edge's run holds until it is lost.
    proc = start_snakemake(work, env, config, "--keep-going", "--resources", "measurement=2")
    try:
        held_on(edge, proc, local)
        edge.lose()  # while its run's container is held mid-run
        out = proc.communicate(timeout=900)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
        edge.start_slurmd()  # the node back, whatever happened (the next tests need it)
        local.wait_ready(["fog", "edge"])
    assert proc.returncode != 0 and "Error in rule run" in out, out[-3000:]
    assert f"output: {edge_meta.relative_to(work)}" in out.split("Error in rule run")[1], out[-3000:]
    assert fog_meta.exists() and not edge_meta.exists()  # the finished run of the other host is kept
    left = labelled_on(edge)
    assert left  # what the lost run left, until its host's next run
    kept = fog_meta.stat().st_mtime
    proc = start_snakemake(work, env, config)  # the same command
    try:
        held_on(edge, proc, local, besides=left)  # the rerun, held: the leftover was reaped before it
        assert not set(left) & set(labelled_on(edge))
        release(edge_meta.parent)
        out = proc.communicate(timeout=900)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out[-3000:]
    meta = json.loads(edge_meta.read_text())
    assert meta["n_failed"] == 0 and meta["reaped_before"], meta.get("reaped_before")
    assert meta["settings"]["hold"] is True
    assert fog_meta.stat().st_mtime == kept  # not rerun
    assert labelled_on(edge) == [] and nothing_left() == []
    queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True).stdout
    assert queue.strip() == ""
    each_host_ran_on_its_node_and_both_are_reported(work, edge)


def test_the_network_study_across_two_hosts_serves_from_the_remote_nodes_bare_metal(cluster):
    """Paper 001's Experiment 5 (Tables IV and V): the client in each entity on fog, the server a
    bare-metal process of edge, started there as a Slurm job by the run."""
    env, edge, shared, _ = cluster
    work = shared / "remote"
    work.mkdir()
    network = {"remote_host": "edge", "runtimes": ["baremetal", "docker"], "microservices": ["NS"],
               "modes": ["bridge", "ovs"], "duration_s": 1, "iterations": 2}  # fmt: skip
    config = {
        "host": "fog",
        "run_on": ["fog"],
        "runtimes": ["baremetal", "docker"],
        "studies": {"network": network},
    }
    r = snakemake(work, env, "report/paper.html", config=config)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    metas = sorted(work.glob("results/raw/fog/*/network/NS/to-remote/*/rep1/meta.json"))
    # Docker's bridge (NAT) and an OVS switch (routed by this machine) both reach the other node.
    assert [m.parts[-7] + "/" + m.parts[-3] for m in metas] == [
        "baremetal/host",
        "docker/bridge",
        "docker/ovs",
    ], metas
    for m in metas:
        meta = json.loads(m.read_text())
        assert meta["n_failed"] == 0 and meta["server_address"] == edge.address(), meta
        assert meta["server_side"] == "bare metal of edge"
        test = json.loads((m.parent / "client" / "iter0001.out").read_text())  # iperf3's own record
        assert test["start"]["connected"][0]["remote_host"] == edge.address()
        assert test["end"]["sum_received"]["bits_per_second"] > 0
    rel = (work / "results/stats/network/relative.tsv").read_text()
    assert "docker\tto-remote\tbridge\tthroughput" in rel and "baremetal/to-remote/host" in rel
    html = (work / "report/paper.html").read_text()
    assert "our Table IV" in html and "container → remote host" in html
    # The server's Slurm job ended with its run; nothing of it is left on edge.
    assert subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True).stdout.strip() == ""
    deadline = time.time() + 30  # Slurm ends a cancelled job's processes (KillWait 5 s)
    while "iperf3" in edge.exec("ps", "-e", "-o", "comm").stdout and time.time() < deadline:
        time.sleep(1)
    assert "iperf3" not in edge.exec("ps", "-e", "-o", "comm").stdout


def test_a_run_that_needs_another_host_is_refused_without_slurm(tmp_path):
    config = {
        "host": "fog",
        "studies": {"network": {"remote_host": "edge", "runtimes": ["docker"], "microservices": ["NS"]}},
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "--cores", "1", "report/paper.html",
         "--configfile", str(tmp_path / "c.yaml")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "uses host 'edge' too, started there through Slurm" in out, out[-2000:]
    assert not (tmp_path / "results/raw").exists()
