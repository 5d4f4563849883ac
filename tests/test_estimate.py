"""The time estimate: history of the same settings first (meta.json and the durations ledger),
else the study's model, else no estimate; the progress line."""

import io
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, SNAKEMAKE
from interference import studies
from interference.core.microservices import registry
from interference.steps import estimate, progress
from interference.stores import durations
from interference.studies.pairs import duration

CASE1_L = {
    "host": "h",
    "study": "pairs",
    "runtime": "docker",
    "key": "case1/L",
    "case": "1",
    "pair": "L",
    "iterations": 10,
    "sizes": {"L": {"n": 4000}},
}
CASE3A_LB = {
    "host": "h",
    "study": "pairs",
    "runtime": "docker",
    "key": "case3a/L+B",
    "case": "3a",
    "pair": "L+B",
    "window_s": 6,
    "adaptive": {"min_overlap_samples": 5, "window_cap_s": 120},
    "sizes": {"L": {"n": 4000}, "B": {"file_size_mb": 2048, "ram_mb": 1024}},
}


def planned(settings, rep=1, meta="m.json"):
    return estimate.PlannedRun(
        settings["study"], settings["runtime"], settings["key"], rep, meta, {**settings, "repetition": rep}
    )


def write_meta(results, settings, rep, seconds, finished=1000.0):
    d = results / "raw" / "h" / "docker" / "pairs" / settings["key"] / f"rep{rep}"
    d.mkdir(parents=True)
    meta = {"settings": {**settings, "repetition": rep}, "started": finished - seconds, "finished": finished}
    (d / "meta.json").write_text(json.dumps(meta))
    return meta


def test_pair_model_against_a_hand_computation():
    # Case 1: setup + 10 x (Linpack's declared time at n = 4000 + a container's start and stop).
    linpack = 0.1 + 4000**3 / 1.1e11
    assert duration.run_seconds(CASE1_L) == 0.5 + 10 * (linpack + 0.3)
    # A concurrent window held open for 6 of Bonnie++'s 2 GB iterations (4.6 + 2048 / 435 s),
    # the start file, and half an iteration finishing after the window.
    bonnie = 4.6 + 2048 / 435
    assert duration.run_seconds(CASE3A_LB) == 0.5 + 0.5 + 6 * bonnie + bonnie / 2
    # The cap bounds the window.
    capped = {**CASE3A_LB, "adaptive": {"min_overlap_samples": 50, "window_cap_s": 120}}
    assert duration.run_seconds(capped) == 0.5 + 0.5 + 120 + bonnie / 2
    # A network benchmark's server: started, then its readiness (1 s) awaited.
    ns = {**CASE1_L, "key": "case1/NS", "pair": "NS", "sizes": {"NS": {"duration_s": 1}}}
    assert duration.run_seconds(ns) == 0.5 + 0.3 + 1.0 + 10 * (1.05 + 0.3)
    assert studies.get("pairs").expected_seconds(CASE1_L) == duration.run_seconds(CASE1_L)


def test_every_pair_microservice_declares_its_iteration_time():
    for ms in ("L", "S", "B", "NS", "NR", "Y"):
        assert registry()[ms].iteration_seconds({}) > 0


def test_history_from_meta_json_beats_the_model_and_takes_the_median(tmp_path):
    for rep, seconds in ((1, 30.0), (2, 40.0), (3, 90.0)):
        write_meta(tmp_path, CASE1_L, rep, seconds, finished=1000.0 + rep)
    past = durations.history(tmp_path, "h")
    (got,) = estimate.estimate([planned(CASE1_L, rep=4)], past, lambda r: 7.0)
    assert (got.seconds, got.source) == (40.0, "history")
    # Other settings (another size) have no history: the model answers.
    other = {**CASE1_L, "sizes": {"L": {"n": 5000}}}
    (got,) = estimate.estimate([planned(other)], past, lambda r: 7.0)
    assert (got.seconds, got.source) == (7.0, "model")


def test_the_ledger_keeps_history_after_the_raw_results_are_deleted(tmp_path):
    meta = write_meta(tmp_path, CASE1_L, 1, 25.0)
    durations.record(meta, tmp_path)
    durations.record(meta, tmp_path)  # the same run twice counts once
    import shutil

    shutil.rmtree(tmp_path / "raw")
    past = durations.history(tmp_path, "h")
    assert list(past.values()) == [[25.0]]


def test_no_model_and_no_history_gives_no_estimate_and_says_so():
    runs = estimate.estimate([planned(CASE1_L)], {}, lambda r: None)
    assert runs[0].seconds is None
    lines = estimate.plan_lines(runs)
    assert "No estimate for pairs" in " ".join(lines)
    assert "Plan: 1 runs to do (pairs on docker: 1)" in lines[0]


def test_plan_total_adds_runs_parsing_images_and_the_report():
    runs = estimate.estimate([planned(CASE1_L, 1, "a"), planned(CASE1_L, 2, "b")], {}, lambda r: 60.0)
    total = estimate.total_seconds(
        runs, ["results/images/h/docker/base.json", "results/images/h/docker/L.json"]
    )
    # Two runs of 60 s, parsing between them and the steps after, the base image and one more.
    after = 2 * (estimate.PARSE_PER_RUN_S + estimate.AFTER_PER_RUN_S) + estimate.AFTER_RUNS_S
    expected = 120 + after + estimate.BASE_IMAGE_S + estimate.IMAGE_S
    assert total == expected
    assert (
        f"about {expected / 60:.0f} min in all" in estimate.plan_lines(runs, ["x/base.json", "x/L.json"])[1]
    )


def test_progress_line_counts_runs_and_scales_what_is_left(tmp_path):
    runs = [
        estimate.PlannedRun("pairs", "docker", f"k{i}", 1, str(tmp_path / f"{i}.json"), {}, 600.0, "model")
        for i in range(3)
    ]
    after = 2 * (estimate.PARSE_PER_RUN_S + estimate.AFTER_PER_RUN_S) + estimate.AFTER_RUNS_S
    p = progress.Progress(runs, stream=io.StringIO())
    # The first run took as long as its estimate: what is left is the other two's estimates.
    (tmp_path / "0.json").write_text(json.dumps({"started": 1000.0, "finished": 1600.0}))
    assert p.line(runs[:1]) == f"run 1 of 3 done, about {(2 * 600 + after) / 60:.0f} min left"
    # Twice as slow as estimated: what is left doubles (another invocation: a finished run's
    # duration is read once).
    (tmp_path / "0.json").write_text(json.dumps({"started": 1000.0, "finished": 2200.0}))
    p = progress.Progress(runs, stream=io.StringIO())
    assert f"about {(2 * 1200 + after) / 60:.0f} min left" in p.line(runs[:1])


def test_progress_prints_a_line_when_a_run_finishes(tmp_path):
    runs = [estimate.PlannedRun("pairs", "docker", "k", 1, str(tmp_path / "m.json"), {}, 60.0, "model")]
    out = io.StringIO()
    p = progress.Progress(runs, stream=out, poll_s=0.05)
    p.start()
    (tmp_path / "m.json").write_text(json.dumps({"started": 0.0, "finished": 60.0}))
    p.join(timeout=10)
    assert out.getvalue().startswith("run 1 of 1 done, about ")


def test_a_planned_run_whose_meta_exists_is_done_when_it_is_written_again(tmp_path):
    """The drift check's runs run again after new runs: their old meta.json is not a finish."""
    meta = tmp_path / "end.json"
    meta.write_text(json.dumps({"started": 0.0, "finished": 60.0}))
    old = meta.stat().st_mtime
    runs = [estimate.PlannedRun("pairs", "docker", "case1-end/L", 1, str(meta), {}, 60.0, "model")]
    out = io.StringIO()
    p = progress.Progress(runs, stream=out, poll_s=0.05)
    p.start()
    time.sleep(0.3)
    assert out.getvalue() == "" and p.is_alive()
    meta.write_text(json.dumps({"started": 100.0, "finished": 160.0}))
    os.utime(meta, (old + 5, old + 5))  # rewritten: a later modification time
    p.join(timeout=10)
    assert out.getvalue().startswith("run 1 of 1 done, about ")


def test_a_dry_run_prints_the_plan_with_an_estimate(tmp_path):
    r = subprocess.run(
        [
            SNAKEMAKE,
            "-n",
            "-d",
            str(tmp_path),
            "report/paper.html",
            "--configfile",
            str(REPO / "config/ci.yaml"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "Plan: 38 runs to do (pairs on docker: 38)." in out
    assert "Estimate: about " in out and "38 from the study's model" in out
    # A host never seen: the models scaled by a probe of it.
    assert "The models are scaled ×" in out and "a probe of this host" in out


def test_the_models_are_scaled_by_this_hosts_history_else_by_its_probe():
    from interference.host.probe import REFERENCE_S

    model = {"a": 10.0, "b": 100.0}
    of = lambda s: model.get(s["name"])  # noqa: E731
    past = {
        json.dumps({"name": "a"}): [12.0, 14.0],
        json.dumps({"name": "b"}): [150.0],
        json.dumps({"name": "c"}): [9.0],
    }
    # By hand: (12 + 14 + 150) / (10 + 10 + 100) = 176 / 120; "c" has no model and does not count.
    sc = estimate.model_scale(past, of, probe=lambda: 1 / 0)
    assert (sc.source, sc.factor) == ("history", 176 / 120)
    # Fewer than three runs with a model: the probe's ratio to the reference machine's.
    sc = estimate.model_scale({json.dumps({"name": "a"}): [12.0]}, of, probe=lambda: 2 * REFERENCE_S)
    assert (sc.source, sc.factor) == ("probe", 2.0)
    assert estimate.model_scale({}, of, probe=None) == estimate.Scale()
    runs = estimate.estimate([planned(CASE1_L)], {}, lambda r: 60.0, sc)
    assert runs[0].seconds == 120.0 and runs[0].source == "model"
    assert "scaled ×2.00 to this host (a probe of this host" in " ".join(estimate.plan_lines(runs, [], sc))


def test_the_machine_probe_is_measured_once_per_boot_and_hour(tmp_path, monkeypatch):
    """Every snakemake invocation in any folder reads this machine's probe: measured once, kept
    beside the measurement lock, again when an hour old or after a reboot."""
    from interference.host import probe

    measured = []
    monkeypatch.setattr(probe, "probe_seconds", lambda: measured.append(1) or 0.2 + len(measured) / 10)
    monkeypatch.setattr(probe, "cpu_pressure", lambda: 0.0)  # a quiet machine (the test suite is not)
    cache, t0 = tmp_path / "probe.json", 1_000_000.0
    assert probe.machine_probe(cache, now=t0) == pytest.approx(0.3) and len(measured) == 1
    assert probe.machine_probe(cache, now=t0 + 3599) == pytest.approx(0.3) and len(measured) == 1
    assert probe.machine_probe(cache, now=t0 + 3601) == pytest.approx(0.4) and len(measured) == 2
    monkeypatch.setattr(probe, "_boot_id", lambda: "another boot")
    assert probe.machine_probe(cache, now=t0 + 3602) == pytest.approx(0.5) and len(measured) == 3
    # A folder with no probe of its own (a dry run keeps nothing under results/) reads the machine's.
    monkeypatch.setattr(probe, "MACHINE_CACHE", cache)
    kept = probe.machine_probe()  # measured now (the real clock), and kept
    assert probe.cached_probe(tmp_path / "results", "h") == kept and len(measured) == 4
    assert not (tmp_path / "results").exists()
    # A probe kept by another version measured something else: it is measured again.
    cache.write_text(json.dumps({"seconds": 9.0, "measured": t0 + 3602, "boot_id": "another boot"}))
    assert probe.machine_probe(cache, now=t0 + 3603) == pytest.approx(0.7) and len(measured) == 5
    old = tmp_path / "results/durations/h.probe.json"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"seconds": 9.0}))
    assert probe.cached_probe(tmp_path / "results", "h") != 9.0
    old.write_text(json.dumps({"seconds": 9.0, "version": probe.PROBE_VERSION}))
    assert probe.cached_probe(tmp_path / "results", "h") == 9.0


def test_a_probe_of_a_busy_machine_is_used_once_and_not_kept(tmp_path, monkeypatch):
    """Some task waited for a CPU 40 % of the last 10 s: the probe serves this invocation (its
    plan and its estimate print one factor) and is not kept for the hour; the next invocation,
    on a quiet machine, is measured again and kept."""
    from interference.host import probe

    measured = []
    monkeypatch.setattr(probe, "probe_seconds", lambda: measured.append(1) or 0.2 + len(measured) / 10)
    monkeypatch.setattr(probe, "_NOT_KEPT", {})
    cache, t0 = tmp_path / "probe.json", 1_000_000.0
    monkeypatch.setattr(probe, "cpu_pressure", lambda: 40.0)
    assert probe.machine_probe(cache, now=t0) == pytest.approx(0.3) and not cache.exists()
    assert probe.machine_probe(cache, now=t0 + 1) == pytest.approx(0.3) and len(measured) == 1
    monkeypatch.setattr(probe, "_NOT_KEPT", {})  # the next invocation: a new process
    monkeypatch.setattr(probe, "cpu_pressure", lambda: 2.0)
    assert probe.machine_probe(cache, now=t0 + 1) == pytest.approx(0.4) and cache.exists()
    assert probe.machine_probe(cache, now=t0 + 2) == pytest.approx(0.4) and len(measured) == 2
    # Read from the kernel's own file here, a share in percent.
    assert 0.0 <= probe.cpu_pressure() <= 100.0


def test_a_budgeted_plan_scales_by_this_hosts_runs_once_and_keeps_that_scale(tmp_path, monkeypatch):
    """The plan takes the host's history before its probe (the probe can drift from the runs:
    docs/planning.md), and keeps the factor so that the plan does not move as runs are added."""
    from interference.host import probe

    monkeypatch.setattr(probe, "MACHINE_CACHE", tmp_path / "machine-probe.json")
    monkeypatch.setattr(probe, "probe_seconds", lambda: 3 * probe.REFERENCE_S)
    results = tmp_path / "results"
    settings = CASE1_L
    model, fixed = estimate.study_model(settings), estimate.study_fixed(settings)
    assert model and model > fixed >= 0

    def ran(rep: int, times: float) -> None:  # a run of the fixed part plus `times` the scaling part
        start = rep * 100.0  # distinct ends: a run is its settings and its end
        meta = {"settings": {**settings, "repetition": rep}, "started": start}
        durations.record({**meta, "finished": start + fixed + times * (model - fixed)}, results)

    # No history: the probe's ratio, never kept (the plan moves once, when history comes).
    said = estimate.host_scale(results, "h")
    assert (said.source, said.factor) == ("probe", pytest.approx(3.0))
    assert not estimate.scale_path(results, "h").exists()
    for rep in (1, 2, 3):
        ran(rep, 2.0)  # x2 by hand
    assert estimate.host_scale(results, "h", keep=False).source == "history"
    assert not estimate.scale_path(results, "h").exists()  # keep=False writes nothing
    said = estimate.host_scale(results, "h")
    assert said.source == "history" and said.factor == pytest.approx(2.0, rel=1e-3)
    assert "3 earlier runs" in estimate.scale_words(said) and "×2.00" in estimate.scale_words(said)
    # Kept: three runs three times slower do not move it (nor the plan keyed by it).
    for rep in (4, 5, 6):
        ran(rep, 6.0)
    assert estimate.host_scale(results, "h").factor == pytest.approx(2.0, rel=1e-3)
    estimate.scale_path(results, "h").unlink()  # deleted: made again, from all six runs
    assert estimate.host_scale(results, "h").factor == pytest.approx(4.0, rel=1e-3)


def marked_unfinished_by_snakemake(workdir, output: str) -> None:
    """The marker snakemake's file persistence writes when a job with this output starts (its
    own naming code, so the reader is checked against snakemake, not against itself)."""
    from snakemake.persistence.file import FilePersistence

    persistence = FilePersistence.__new__(FilePersistence)  # only its naming, no DAG
    persistence._max_len = None
    markers = workdir / ".snakemake/incomplete"
    markers.mkdir(parents=True, exist_ok=True)
    path = Path(persistence._record_path(str(markers), output))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"external_jobid": null}')


def test_snakemakes_unfinished_markers_are_read_back_as_their_outputs(tmp_path):
    from interference.stores.unfinished_jobs import unfinished_outputs

    short = "results/raw/h/docker/pairs/case3b/NS+Y/rep2/meta.json"
    long = "results/raw/h/docker/pairs/" + "x" * 300 + "/rep1/meta.json"  # cut into folders
    for output in (short, long):
        marked_unfinished_by_snakemake(tmp_path, output)
    (tmp_path / ".snakemake/incomplete/migration_underway").write_text("")
    assert any(p.is_dir() for p in (tmp_path / ".snakemake/incomplete").iterdir())  # the long one
    assert unfinished_outputs(tmp_path / ".snakemake/incomplete") == {short, long}
    assert unfinished_outputs(tmp_path / "none") == set()


def test_the_plan_counts_the_drift_checks_runs_that_run_again_after_a_new_run(tmp_path):
    """config/ci.yaml measured but one run: that run, and the four Case 1 baselines measured
    again after all others (they wait for it), are to do; and so is a run whose meta.json is
    there but which snakemake marked unfinished (a forced rerun stopped mid-run: the next
    command makes it again)."""
    from interference import studies
    from interference.steps.config import load

    cfg = load(REPO / "config/ci.yaml")
    pairs = studies.get("pairs")
    keys = pairs.runs(cfg["studies"]["pairs"])
    for k in keys[1:]:
        meta = tmp_path / f"results/raw/{cfg['host']}/docker/pairs/{k.key}/rep{k.repetition}/meta.json"
        meta.parent.mkdir(parents=True)
        meta.write_text("{}")
    interrupted = keys[1]
    assert not pairs.after_all(interrupted.key)
    marked_unfinished_by_snakemake(
        tmp_path,
        f"results/raw/{cfg['host']}/docker/pairs/{interrupted.key}/rep{interrupted.repetition}/meta.json",
    )
    r = subprocess.run(
        [SNAKEMAKE, "-n", "-d", str(tmp_path), "report/paper.html", "--configfile", str(REPO / "config/ci.yaml")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    ends = [k for k in keys if pairs.after_all(k.key)]
    assert len(ends) == 4 and not pairs.after_all(keys[0].key)
    assert "Plan: 6 runs to do (pairs on docker: 6)." in r.stdout + r.stderr, (r.stdout + r.stderr)[-2000:]
