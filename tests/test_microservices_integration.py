"""Real runs of the disk, network and pi microservices (B, NS, NR, Y) at tiny sizes: images
built, Case 1 and a concurrent case run by the case runner, rows parsed, and every container,
network and scratch volume removed afterwards."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, nothing_left, requires_engine, run_settings, start_run_case
from interference.steps.parse import parse_run

pytestmark = [pytest.mark.integration, requires_engine]

LIMITS = {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"}
SIZES = {
    # 256 MB is too small to measure on a fast disk (+++++) but exercises the scratch volume,
    # and bonnie++'s O_DIRECT (-D) path.
    "B": {"file_size_mb": 256, "ram_mb": 128, "seeks": 8192, "files_k": 0, "direct_io": True},
    "NS": {"duration_s": 1},
    "NR": {"duration_s": 2},
    "Y": {"digits": 200000},
}
ENV = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}


def python_m(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [sys.executable, "-m", *args],
        check=False,
        env=ENV,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    """Image files (like results/images/<host>/docker/<name>.json) for base, B, NS, NR, Y and NS+NR."""
    d = tmp_path_factory.mktemp("images")
    common = ["--runtime", "docker", "--log", str(d / "build.log")]
    python_m("interference.steps.images", "base", "--out", str(d / "base.json"), *common)
    for ms in ("B", "NS", "NR", "Y"):
        python_m(
            "interference.steps.images",
            ms,
            "--on",
            str(d / "base.json"),
            "--out",
            str(d / f"{ms}.json"),
            *common,
        )
    python_m(
        "interference.steps.images",
        "NS+NR",
        "--on",
        str(d / "NS.json"),
        "--out",
        str(d / "NS+NR.json"),
        *common,
    )
    return d


def run(images: Path, meta: Path, case: str, pair: str, image_names: list[str], **extra) -> dict:
    settings = run_settings(case, pair, LIMITS, {m: SIZES[m] for m in pair.split("+")}, **extra)
    assert start_run_case(settings, [images / f"{n}.json" for n in image_names], meta).wait(900) == 0
    return json.loads(meta.read_text())


def assert_nothing_left():
    assert nothing_left() == []  # Docker's labelled networks and volumes too


def test_case1_pi_two_iterations_to_rows(images, tmp_path):
    meta = run(images, tmp_path / "y/meta.json", "1", "Y", ["Y"], iterations=2)
    assert meta["n_iterations"] == 2 and meta["n_failed"] == 0
    assert meta["members"][0]["limits_read_back"]["cpuset"] == "0"
    rows = parse_run(tmp_path / "y/meta.json")
    assert len(rows) == 4  # 2 iterations x (computation_time, total_time)
    assert set(rows["status"]) == {"ok"}
    assert set(rows["metric"]) == {"computation_time", "total_time"}
    assert set(rows["unit"]) == {"s"} and not rows["higher_is_better"].any()
    wide = rows.pivot(index="iteration", columns="metric", values="value")
    assert (wide["computation_time"] > 0).all()
    assert (wide["computation_time"] <= wide["total_time"]).all()
    # total_time is pi's own run; the loop's iteration (container, bash) is a little longer.
    for it in meta["members"][0]["iterations"]:
        assert wide.loc[it["iteration"], "total_time"] <= it["end"] - it["start"]
    assert_nothing_left()


def test_case1_bonnie_uses_and_removes_its_scratch_volume(images, tmp_path):
    meta = run(images, tmp_path / "b/meta.json", "1", "B", ["B"], iterations=2)
    assert meta["n_iterations"] == 2 and meta["n_failed"] == 0
    made = set()
    for c in meta["containers"]:  # one fresh container, and volume, per iteration
        volumes = [a for a in c["argv"] if a.endswith(":/scratch")]
        assert volumes == [f"{c['name']}-scratch-b:/scratch"]
        made.add(f"volume {c['name']}-scratch-b")
    assert len(made) == 2
    assert made == {r for r in meta["leftovers_removed"] if r.startswith("volume ")}
    assert "BONNIE_DIRECT_IO=true" in meta["containers"][0]["argv"]
    rows = parse_run(tmp_path / "b/meta.json")
    assert len(rows) == 8
    for _, row in rows.iterrows():
        # A fast disk finishes 256 MB tests in under 0.5 s: bonnie++ prints +++++ then.
        assert (row["status"] == "ok" and row["value"] > 0) or (
            row["status"].startswith("bonnie++ reported +++++ for ") and pd.isna(row["value"])
        ), row.to_dict()
    assert_nothing_left()


def test_case3b_network_pair_with_servers(images, tmp_path):
    meta = run(
        images, tmp_path / "3b/meta.json", "3b", "NS+NR", ["NS", "NR"], window_s=4, server_cpus="member"
    )
    roles = sorted(c["role"] for c in meta["containers"])
    assert roles == ["member1", "member2", "server for member1", "server for member2"]
    network = f"interference-{meta['run_id']}-net"
    for c in meta["containers"]:
        argv = c["argv"]
        assert argv[argv.index("--network") + 1] == network
    # Each server on its member's core (network_server_cpus: member), and without other limits.
    servers = {c["role"]: c for c in meta["containers"] if c["role"].startswith("server")}
    for k, cpuset in ((1, "0"), (2, "1")):
        server = servers[f"server for member{k}"]
        assert server["limits_requested"] == {"cpuset": cpuset, "cpus": None, "memory": None}
        assert server["argv"][server["argv"].index("--cpuset-cpus") + 1] == cpuset
    # Each member measured against its own server, by name, on the run's network.
    members = [c for c in meta["containers"] if c["role"].startswith("member")]
    for k, c in enumerate(members, start=1):
        assert f"SERVER_HOST=interference-{meta['run_id']}-server{k}" in c["argv"]
    assert {m["limits_read_back"]["cpuset"] for m in meta["members"]} == {"0", "1"}
    assert meta["n_failed"] == 0
    # The run's network and its four containers (two members, two servers) removed at the end.
    removed = [r.split()[0] for r in meta["leftovers_removed"]]
    assert sorted(removed) == ["container"] * 4 + ["network"]
    gone = subprocess.run(["docker", "network", "inspect", network], capture_output=True, check=False)
    assert gone.returncode != 0
    rows = parse_run(tmp_path / "3b/meta.json")
    assert set(rows["status"]) == {"ok"}
    assert set(rows["metric"]) == {"throughput", "transactions", "latency"}
    assert (rows["value"] > 0).all()
    assert set(zip(rows["target"], rows["partner"])) == {("NS", "NR"), ("NR", "NS")}
    assert_nothing_left()


def test_case2_network_pair_in_one_container(images, tmp_path):
    """Both loops in one container, each with its own server."""
    meta = run(images, tmp_path / "2/meta.json", "2", "NS+NR", ["NS+NR", "NS", "NR"], window_s=3)
    roles = sorted(c["role"] for c in meta["containers"])
    assert roles == ["member1+member2", "server for member1", "server for member2"]
    assert meta["n_failed"] == 0 and all(m["iterations"] for m in meta["members"])
    rows = parse_run(tmp_path / "2/meta.json")
    assert set(rows["status"]) == {"ok"} and (rows["value"] > 0).all()
    assert_nothing_left()


def test_case3a_triple_three_containers_each_beside_its_two_others(images, tmp_path):
    """A group of three (the placement advice's triples): three unlimited containers released
    together, each member's rows named beside the other two."""
    meta = run(images, tmp_path / "3a/meta.json", "3a", "NS+NR+Y", ["NS", "NR", "Y"], window_s=3)
    roles = sorted(c["role"] for c in meta["containers"])
    assert roles == ["member1", "member2", "member3", "server for member1", "server for member2"]
    assert meta["n_failed"] == 0 and all(m["iterations"] for m in meta["members"])
    assert meta["overlap"]["end"] > meta["overlap"]["start"]  # all three ran at once
    rows = parse_run(tmp_path / "3a/meta.json")
    assert set(zip(rows["target"], rows["partner"])) == {("NS", "NR+Y"), ("NR", "NS+Y"), ("Y", "NR+NS")}
    assert_nothing_left()


def test_case_2_3a_two_of_a_triple_share_a_container_the_third_runs_apart(images, tmp_path):
    meta = run(images, tmp_path / "m/meta.json", "2-3a", "NS+NR+Y", ["NS+NR", "NS", "NR", "Y"], window_s=3)
    roles = sorted(c["role"] for c in meta["containers"])
    assert roles == ["member1+member2", "member3", "server for member1", "server for member2"]
    assert meta["n_failed"] == 0 and all(m["iterations"] for m in meta["members"])
    rows = parse_run(tmp_path / "m/meta.json")
    assert set(zip(rows["target"], rows["partner"])) == {("NS", "NR|Y"), ("NR", "NS|Y"), ("Y", "NR+NS")}
    assert_nothing_left()
