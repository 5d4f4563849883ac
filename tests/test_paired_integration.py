"""The paired design run for real (Docker): Case 3b with the partner switched on and off inside
each run, and the A/A variant that switches nothing. Tiny sizes: two blocks of phases of about a
second each."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import docker_answers, nothing_left, run_report

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not docker_answers(), reason="needs a running Docker engine"),
]

PAIRS = {
    "microservices": ["L", "S"],
    "cases": ["3b"],
    "pairs": ["L+S"],
    "repetitions": 2,
    "iterations": 2,
    "window_s": {"3b": 4},
    "phases": {"blocks": 2, "iterations": 3},
    "iteration_timeout_s": 60,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    "sizes": {"L": {"n": 800}, "S": {"array_elements": 2000000, "ntimes": 3}},
}
RAW = "results/raw/testhost/docker/pairs/case3b/L+S"


def config(**phases) -> dict:
    pairs = PAIRS | {"phases": PAIRS["phases"] | phases}
    return {"host": "testhost", "runtimes": ["docker"], "studies": {"pairs": pairs}}


@pytest.fixture(scope="module")
def switched(tmp_path_factory):
    wd = tmp_path_factory.mktemp("paired")
    run_report(wd, config(), target="results/stats/pairs/interference.tsv")
    run_report(wd, config(), target="results/stats/pairs/runs.tsv")  # the runs' table reads a phased window
    return wd


def members(meta: dict) -> list[list[dict]]:
    return [m["iterations"] for m in meta["members"]]


def test_each_member_ran_only_in_its_phases_and_was_measured_with_and_without_its_partner(switched):
    for rep in (1, 2):
        meta = json.loads((switched / RAW / f"rep{rep}/meta.json").read_text())
        sched = meta["phases"]
        plan = (switched / RAW / f"rep{rep}/phases").read_text().split("\n")
        lines = [line.split() for line in plan if line]
        assert sched["switch"] and len(lines) == 2 * 3 == meta["settings"]["phases"]["blocks"] * 3
        for k, its in enumerate(members(meta), 1):
            # The loop held itself: no iteration began in a phase that leaves its member out.
            for it in its:
                phase = [p for p in lines if float(p[0]) <= it["start"] < float(p[1])]
                assert not phase or f",{k}," in phase[0][2], (k, it, phase)
            kinds = {it["phase"] for it in its}
            assert {"with", "without"} <= kinds, kinds
            # Only the *with* iterations are the case's concurrent samples.
            assert all(it["in_overlap"] == (it["phase"] == "with") for it in its)
        # No iteration of the partner touched a *without* iteration.
        a, b = members(meta)
        for mine, other in ((a, b), (b, a)):
            for it in (i for i in mine if i["phase"] == "without"):
                assert not any(o["start"] < it["end"] and it["start"] < o["end"] for o in other)


def test_the_ir_is_the_paired_one_over_runs(switched):
    t = pd.read_csv(switched / "results/stats/pairs/interference.tsv", sep="\t")
    assert set(t["ci_level"]) == {"runs, paired"}
    assert (t["runs"] == 2).all() and (t["blocks"] >= 2).all()
    assert (t["ir_ci_low"] <= t["ir"]).all() and (t["ir"] <= t["ir_ci_high"]).all()
    assert (t["ir_se_baseline"] == 0).all()  # in Case 3b the without phases are Case 1
    s = pd.read_csv(switched / "results/parsed/pairs/samples.tsv", sep="\t")
    assert set(s["phase"]) <= {"with", "without", "mixed"} and (s["block"][s["phase"] != "mixed"] > 0).all()
    runs = pd.read_csv(switched / "results/stats/pairs/runs.tsv", sep="\t")
    assert runs["window_s"].tolist() == [2 * 3 * 1.0] * 2  # 2 blocks of 3 phases of min_phase_s
    assert nothing_left() == []


def test_the_a_a_design_holds_nobody(tmp_path):
    cfg = config(switch=False, blocks=1)
    cfg["studies"]["pairs"]["repetitions"] = 1
    run_report(tmp_path, cfg, target=f"{RAW}/rep1/meta.json")
    meta = json.loads((tmp_path / RAW / "rep1/meta.json").read_text())
    assert meta["phases"]["switch"] is False
    a, b = members(meta)
    # The partner ran through the target's "without" phases: only the labels differ.
    for mine, other in ((a, b), (b, a)):
        alone = [i for i in mine if i["phase"] == "without"]
        assert alone and any(o["start"] < alone[-1]["end"] and alone[0]["start"] < o["end"] for o in other)
