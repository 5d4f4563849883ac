"""Paper 001's scaling, creation and network studies run for real on a tiny config, to the report:
sysbench instances on bare metal, Docker and LXC; creation of containers and of nested
parents with their child; iperf3 between the host and Docker and LXC containers, VMs and nested children
on the host network, a Linux bridge and Open vSwitch; the paper's Tables I-III beside ours;
nothing left behind."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from conftest import nothing_left, requires_engine, run_report

pytestmark = [pytest.mark.integration, requires_engine]

TINY = {
    "host": "testhost",
    "runtimes": ["baremetal", "docker", "lxc"],
    "studies": {
        "scaling": {"instances": [1, 2], "iterations": 2, "max_prime": 2000, "events": 200},
        "creation": {"runtimes": ["docker", "nested"], "entities": [2], "repetitions": 1},
        "network": {
            "runtimes": ["baremetal", "docker", "lxc", "vm", "nested"],
            "microservices": ["NS"],
            "nested_modes": ["ovs+bridge", "host+bridge"],
            "duration_s": 1,
            "iterations": 2,
        },
    },
}
NETWORK_RUNS = {
    "baremetal": ["to-host/host"],
    "docker": [f"{d}/{m}" for d in ("to-host", "from-host") for m in ("host", "bridge", "ovs")],
    "lxc": [f"{d}/{m}" for d in ("to-host", "from-host") for m in ("host", "bridge", "ovs")],
    "vm": [f"{d}/{m}" for d in ("to-host", "from-host") for m in ("bridge", "ovs")],
    "nested": ["to-host/ovs+bridge", "to-host/host+bridge"],
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("paper001")
    run_report(wd, TINY)
    return wd


def test_every_instance_ran_without_limits(workdir):
    for runtime in TINY["runtimes"]:
        meta = json.loads((workdir / f"results/raw/testhost/{runtime}/scaling/n2/rep1/meta.json").read_text())
        assert meta["n_failed"] == 0 and meta["n_iterations"] == 4
        for inst in meta["instances"]:
            # No cpuset: every core this machine lets the pipeline use.
            assert inst["limits_read_back"]["nproc"] == str(len(os.sched_getaffinity(0)))
            # Released together by the start file, well within one iteration.
        firsts = [i["iterations"][0]["start"] for i in meta["instances"]]
        assert max(firsts) - min(firsts) < 0.5


def test_slowdown_is_relative_to_one_bare_metal_instance(workdir):
    d = pd.read_csv(workdir / "results/stats/scaling/slowdown.tsv", sep="\t")
    assert set(d["runtime"]) == set(TINY["runtimes"]) and set(d["instances"]) == {1, 2}
    assert (d["reference"] == "baremetal, N=1").all()
    ref = d[(d["runtime"] == "baremetal") & (d["instances"] == 1)].iloc[0]
    assert ref["slowdown"] == pytest.approx(1.0) and pd.isna(ref["ci_low"]) and ref["note"] == "the reference"
    others = d.drop(ref.name)
    assert (d["slowdown"] > 0).all() and others["ci_low"].notna().all()
    # One run a cell here: intervals over its iterations, labelled so (no verdict rests on them).
    assert (others["ci_level"] == "iterations").all()


def test_creation_times_every_entity_and_nested_parent(workdir):
    s = pd.read_csv(workdir / "results/stats/creation/summary.tsv", sep="\t", keep_default_na=False)
    exit_ = s[s["metric"] == "created_to_exit"].set_index("runtime")
    assert exit_.loc["docker", "n"] == 2 and exit_.loc["nested", "n"] == 2
    assert exit_.loc["nested", "variant"] == "load"
    meta = json.loads(
        (workdir / "results/raw/testhost/nested/creation/n2/c1/load/rep1/meta.json").read_text()
    )
    parents = [e["setup"]["parent"] for e in meta["entities"]]
    assert len(set(parents)) == 2  # a parent of its own for each entity
    assert all(e["setup"]["child_image_load_s"]["P"] > 0 for e in meta["entities"])
    t1 = pd.read_csv(workdir / "results/stats/creation/table1.tsv", sep="\t")
    assert t1.iloc[0][["parents", "children", "published_mean_s"]].tolist() == [2, 1, 15]


def test_network_modes_carry_traffic_between_host_and_entity(workdir):
    for runtime, runs in NETWORK_RUNS.items():
        for run in runs:
            meta = json.loads(
                (workdir / f"results/raw/testhost/{runtime}/network/NS/{run}/rep1/meta.json").read_text()
            )
            assert meta["n_iterations"] == 2 and meta["n_failed"] == 0, (runtime, run, meta["events"])
            address = meta["server_address"]
            if run.endswith("/host"):
                assert address == "127.0.0.1"
            elif "ovs" in run:  # the OVS bridge's subnet, its userspace datapath recorded
                assert address.startswith("10.232.") and "Open vSwitch" in meta["ovs"]
            else:
                assert not address.startswith(("127.", "10.232."))
    d = pd.read_csv(workdir / "results/stats/network/relative.tsv", sep="\t")
    assert (d["reference"] == "baremetal/to-host/host").all() and (d["metric"] == "throughput").all()
    assert len(d) == sum(len(r) for r in NETWORK_RUNS.values())
    assert (d["n"] == 2).all(), d[d["n"] != 2]  # every test gave a throughput (a VM needs its route)
    ref = d[d["runtime"] == "baremetal"].iloc[0]
    assert ref["ratio"] == pytest.approx(1.0) and (d["mean"] > 0).all()


def test_the_report_has_every_section_and_nothing_is_left(workdir):
    html = (workdir / "report/paper.html").read_text()
    assert "CPU scaling: N concurrent sysbench instances" in html and "Creation time of N concurrent" in html
    assert "paper 15 s" in html  # Table I's published value beside ours
    assert "Network modes: throughput and latency" in html and "15.82 (0.44)" in html  # Table II's bridge
    assert nothing_left() == []
