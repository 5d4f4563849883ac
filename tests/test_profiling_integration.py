"""The profiling study (issue 35) for real on its smallest config (config/profiling-ci.yaml): L and
S alone, limited and unlimited, and beside a spinning-CPU bubble in one container (placement 2)
and in two (3a), the probe's curve and its degradation beside each; the three tables the
predictor reads, written through their schemas, read by it; nothing left behind."""

import json
import os

import pandas as pd
import pytest
import yaml
from conftest import REPO, left_by, requires_engine, run_report

# Exclusive: no other run meets its 19 runs; they run beside the unit tests (CPU work, no runs:
# scripts/run-tests.sh), whose load changes what they measure, so nothing below checks a
# measured size or sign.
pytestmark = [pytest.mark.integration, pytest.mark.exclusive, requires_engine]

CONFIG = yaml.safe_load((REPO / "config/profiling-ci.yaml").read_text()) | {"host": "profhost"}
RAW = "results/raw/profhost/docker/profiling"
STATS = "results/stats/profiling"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = tmp_path_factory.mktemp("profiling")
    run_report(wd, CONFIG)
    return wd


def test_every_run_measured_its_microservice_beside_what_its_key_says(workdir):
    metas = {str(p.relative_to(workdir / RAW).parent.parent): json.loads(p.read_text())
             for p in (workdir / RAW).glob("*/*/*/rep1/meta.json")}  # fmt: skip
    # Alone (Case 1, 1u), beside the bubble in both placements, the probe alone, beside the
    # bubble and beside each microservice.
    for ms in ("L", "S"):
        assert {f"1/{ms}/alone", f"1u/{ms}/alone", f"2/{ms}/cpu-1", f"3a/{ms}/cpu-1"} <= set(metas)
    for placement in ("2", "3a"):
        assert {f"{placement}/Q/cpu-1", f"{placement}/Q/cpu+L", f"{placement}/Q/cpu+S"} <= set(metas)
    assert "1u/Q/cpu" in metas, sorted(metas)
    # The quota sweep: every core allowed, a CFS quota of half a core, as the container's own
    # cgroup reads it back.
    for ms in ("L", "S"):
        (member,) = metas[f"1q/{ms}/quota-0.5"]["members"]
        limits = member["limits_read_back"]
        assert int(limits["cpu_quota_us"]) / int(limits["cpu_period_us"]) == 0.5, limits
        assert int(limits["nproc"]) == len(os.sched_getaffinity(0)), limits
    # The busy sweep: the member unlimited, a container spinning one core beside it all along.
    for ms in ("L", "S"):
        containers = metas[f"1k/{ms}/busy-1"]["containers"]
        (spinner,) = [c for c in containers if c["role"] == "busy neighbour 1"]
        assert spinner["argv"][-1] == "/opt/microservices/X/run" and "BUBBLE_RESOURCE=cpu" in spinner["argv"]
        assert (
            containers.index(spinner) == 0
            and len(containers) == 1 + CONFIG["studies"]["profiling"]["iterations"]
        )
    for key, meta in metas.items():
        assert meta["n_failed"] == 0 and meta["n_iterations"] >= 2, (key, meta.get("events"))


def test_the_tables_hold_a_sensitivity_curve_a_pressure_and_a_limit_effect(workdir):
    sens = pd.read_csv(workdir / STATS / "sensitivity.tsv", sep="\t")
    for ms in ("L", "S"):
        for placement in (2, 3):  # "3a" is read as text, "2" as a number
            rows = sens[
                (sens["microservice"] == ms) & sens["placement"].astype(str).str.startswith(str(placement))
            ]
            assert sorted(rows["intensity"].unique()) == [0, 1], (ms, placement)
            spun = rows[rows["intensity"] == 1]
            assert ((spun["ci_low"] <= spun["degradation"]) & (spun["degradation"] <= spun["ci_high"])).all()
            # No direction is checked: each cell is one run with an interval over its iterations,
            # and a slow or fast baseline run decides the sign. STREAM beside a busy core in its own
            # container read -0.66 to -0.94 most days, -0.15 to +0.10 once (2026-11-28, a slow
            # Case 1u baseline) and +0.57 to +1.16 later that day (make test, 17:18): the effect's
            # size is a measurement (docs/placement.md), not something a test can promise.
    pressure = pd.read_csv(workdir / STATS / "pressure.tsv", sep="\t")
    assert set(pressure["microservice"]) == {"L", "S"} and (pressure["pressure"] >= 0).all()
    limit = pd.read_csv(workdir / STATS / "limit_effect.tsv", sep="\t")
    assert {"L", "S"} == set(limit["microservice"]) and limit["effect"].notna().all()


def test_the_quota_sweep_gives_each_microservice_its_speed_at_a_share(workdir):
    from interference.studies.profiling import cpu_shares

    t = pd.read_csv(workdir / STATS / "cpu_speed.tsv", sep="\t", dtype={"case": str})
    for ms in ("L", "S"):
        rows = t[t["microservice"] == ms]
        assert set(rows["case"]) == {"1", "1u", "1q", "1k"} and (rows["threads"] >= 1).all()
        busy = rows[rows["case"] == "1k"]
        demand = rows.loc[rows["case"] == "1u", "cpu_cores"].iloc[0]
        assert busy["cores"].tolist() == pytest.approx(
            [min(1.0, demand)] * len(busy)
        )  # one neighbour: a core each
        assert ((rows["ci_low"] <= rows["speed"]) & (rows["speed"] <= rows["ci_high"])).all()
        assert rows.loc[rows["case"] == "1q", "cores"].tolist() == [0.5] * rows["metric"].nunique()
        assert (rows["cpu_cores"] > 0).all()  # the loop read its container's CPU time
    curves = cpu_shares.curves(t.drop(columns=["host", "runtime"]))
    units = pd.DataFrame([("3a", "L", "S", "gflops", True)],
                         columns=["case", "target", "partner", "metric", "higher_is_better"])  # fmt: skip
    (row,) = cpu_shares.predict_units(curves, units, cores=2).itertuples()
    assert 0 < row.share <= 2 and row.ir_low <= row.ir <= row.ir_high, row


def test_the_predictor_reads_them_and_predicts_the_pair(workdir):
    from interference.studies.profiling.predict import predict_group
    from interference.studies.profiling.profiles import Profiles

    profiles = Profiles.read(
        *(workdir / STATS / f"{t}.tsv" for t in ("sensitivity", "pressure", "limit_effect"))
    )
    rows = predict_group(profiles, "3a", ["L", "S"])
    assert {r["target"] for r in rows} == {"L", "S"}
    for r in rows:  # the cpu alone was profiled: the prediction rests on it and says so
        assert r["ir_low"] <= r["ir"] <= r["ir_high"], r
        assert r["reason"] == "not profiled, left out: memory, disk, network"
    # make advise on the same tables: both placements of two ranked, apart and together.
    from interference.steps import placement

    assert placement.main(["advise", "--stats", str(workdir / "results/stats"), "--host", "profhost",
                           "--services", "L", "S", "--cores", "2", "--memory", "4g"]) == 0  # fmt: skip
    advice = pd.read_csv(workdir / "results/stats/placement/advice-L+S.tsv", sep="\t")
    assert advice["rank"].notna().sum() == 4 and advice["total_slowdown"].notna().all()


def test_the_report_shows_the_study_and_nothing_is_left(workdir):
    html = (workdir / "report/paper.html").read_text()
    assert "Profiles for placement advice: each microservice alone, under CPU limits and beside load" in html
    assert "cpu: slowed by the largest bubble" in html  # the profile table of the section
    run_ids = [json.loads(p.read_text())["run_id"] for p in (workdir / RAW).glob("*/*/*/rep1/meta.json")]
    assert run_ids and left_by(run_ids) == []
