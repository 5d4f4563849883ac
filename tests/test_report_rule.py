"""The report rule on a real tiny pipeline: `snakemake report/paper.html` builds everything
once; afterwards an edit of the report source alone reruns the report rule only (no
benchmark, parse or statistics job), and an edit of a study's statistics code reruns its
tables and the report only.

It runs a copy of the workflow's sources (so the edit touches no file of the checkout) on a
fresh work directory; the images are the checkout's (same build inputs, same tags)."""

import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, requires_engine
from interference.core import run_order
from interference.stats import descriptive

pytestmark = [pytest.mark.integration, requires_engine]

PAIRS = {
    "microservices": ["L", "S"],
    "cases": ["1", "2", "3b"],
    "pairs": ["L+S"],  # both members' roles; self-pairs would add runs, not paths
    "iterations": 2,
    "window_s": {"2": 4, "3b": 4},
    "iteration_timeout_s": 60,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    # STREAM's threads explicit; Linpack's 0: one per CPU its container may use.
    "sizes": {"L": {"n": 800}, "S": {"array_elements": 2000000, "ntimes": 3, "threads": 1}},
    "drift_check": True,
}
TINY = {"host": "reporthost", "studies": {"pairs": PAIRS}}


SOURCES = ["Snakefile", "profiles", "workflow", "scripts", "containers", "config", "report"]


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    snakefile = workdir.parent / "src" / "Snakefile"
    r = subprocess.run(
        [
            SNAKEMAKE,
            "-s",
            str(snakefile),
            "-d",
            str(workdir),
            *args,
            "--configfile",
            str(workdir / "tiny.yaml"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def planned_jobs(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run: rule -> count ({} when nothing is to be done)."""
    if "Job stats:" not in dry_run_output:
        return {}
    table = dry_run_output.split("Job stats:")[1].split("total")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, flags=re.MULTILINE)}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("report-pipeline")
    (root / "src").mkdir()
    for name in SOURCES:
        src = REPO / name
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "paper.html", "paper_files", "*.ipynb")
        if src.is_dir():
            shutil.copytree(src, root / "src" / name, ignore=ignore)
        else:
            shutil.copy2(src, root / "src" / name)
    wd = root / "work"
    wd.mkdir()
    (wd / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    snakemake(wd, "--cores", "2", "report/paper.html")
    return wd


def test_run_info_collects_every_run(workdir):
    runs = pd.read_csv(workdir / "results/stats/pairs/runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    # L, S alone; L+S in Cases 2 and 3b; L, S alone again at the end (drift_check)
    assert len(runs) == 2 + 2 + 2
    members = pd.read_csv(
        workdir / "results/stats/pairs/run_members.tsv", sep="\t", dtype=str, keep_default_na=False
    )
    assert len(members) == 2 + 2 * 2 + 2 and set(members["run_id"]) == set(runs["run_id"])
    limited = members[members["key"].str.startswith("case3b/")]
    assert list(limited["member"]).count("2") == 1 and set(limited["limits_match"]) == {"yes"}
    env = json.loads((workdir / "results/stats/environment.json").read_text())
    assert env["config"]["host"] == "reporthost" and len(env["config_sha256"]) == 64
    assert env["engines"]["docker"]["cgroup_version"] in ("1", "2")
    assert {i["image"] for i in env["images"]} == {"base", "L", "S", "L+S"}


def test_runs_started_in_the_seeded_plan_and_the_drift_runs_last(workdir):
    runs = pd.read_csv(workdir / "results/stats/pairs/runs.tsv", sep="\t", keep_default_na=False)
    ids = list(zip(runs["study"], runs["runtime"], runs["key"], runs["repetition"]))
    last = runs["after_all"].astype(bool)
    plan = run_order.plan(
        [i for i, m in zip(ids, last) if not m], [i for i, m in zip(ids, last) if m], seed=1
    )
    executed = [ids[i] for i in runs["started"].argsort()]
    assert executed == sorted(plan, key=plan.get)
    assert set(executed[-2:]) == {
        ("pairs", "docker", "case1-end/L", 1),
        ("pairs", "docker", "case1-end/S", 1),
    }
    # The images were built before the first run (their priority is above every run's).
    images_done = max(
        p.stat().st_mtime for p in (workdir / "results/images/reporthost/docker").glob("*.json")
    )
    assert images_done < runs["started"].min()
    # Each baseline ran its 2 iterations both times; n counts those that count (an iteration under
    # the hypervisor's steal is measured and left out, so the host decides how many).
    samples = descriptive.prepare(pd.read_csv(workdir / "results/parsed/pairs/samples.tsv", sep="\t"))
    baselines = samples[samples["case"].astype(str).isin(["1", "1-end"])]
    ran = baselines.groupby(["target", "metric", "case"]).size()
    assert set(ran) == {2}, ran
    counted = descriptive.valid(baselines).groupby(["target", "metric", "case"]).size()
    drift = pd.read_csv(workdir / "results/stats/pairs/drift.tsv", sep="\t")
    assert set(drift["target"]) == {"L", "S"}
    for r in drift.itertuples():
        assert r.first_n == counted.get((r.target, r.metric, "1"), 0), r
        assert r.end_n == counted.get((r.target, r.metric, "1-end"), 0), r
    assert (drift["hours_between"] > 0).all()
    # A change needs an iteration that counts on both sides; steal can leave one side with none.
    both_counted = (drift["first_n"] > 0) & (drift["end_n"] > 0)
    assert (drift["change"].notna() == both_counted).all(), drift
    # The re-measured baselines are not in the study's tables: Case 1 keeps its own iterations.
    summary = pd.read_csv(workdir / "results/stats/pairs/summary.tsv", sep="\t", dtype={"case": str})
    assert set(summary["case"]) == {"1", "2", "3b"}
    for r in summary[summary["case"] == "1"].itertuples():
        assert r.n == counted.get((r.target, r.metric, "1"), 0), r
    html = (workdir / "report/paper.html").read_text()
    assert "random order drawn with seed 1" in html and "reporthost: 6 runs" in html and "τ = 1.00" in html
    assert "<strong>Drift.</strong>" in html


def running_beside_runs(log: str) -> list[tuple[str, ...]]:
    """From a snakemake log: the sets of jobs (rule names) that were running together with a
    run job, as job starts ("rule X:" then "jobid: N") and ends ("Finished jobid: N") say."""
    running, together, rule = {}, [], None
    for line in log.splitlines():
        if m := re.match(r"(?:local)?rule (\w+):$", line):
            rule = m[1]
        elif (m := re.match(r"\s+jobid: (\d+)$", line)) and rule:
            running[m[1]], rule = rule, None
            if "run" in running.values() and len(running) > 1:
                together.append(tuple(sorted(running.values())))
        elif m := re.match(r"Finished jobid: (\d+)", line):
            running.pop(m[1], None)
    return together


def test_no_other_job_ran_beside_a_measurement(workdir):
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    first = logs[0].read_text()  # the fixture's --cores 2 invocation
    assert first.count("rule run:") == 6 and "parse_run" in first
    assert running_beside_runs(first) == []


def test_rerunning_one_run_does_not_rerun_the_drift_check(workdir):
    meta = "results/raw/reporthost/docker/pairs/case1/L/rep1/meta.json"
    jobs = planned_jobs(snakemake(workdir, "-n", "--forcerun", meta, "report/paper.html").stdout)
    assert jobs["run"] == 1, jobs


def test_thread_counts_recorded_are_those_the_benchmarks_used(workdir):
    stats = workdir / "results/stats/pairs"
    runs = pd.read_csv(stats / "runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    members = pd.read_csv(stats / "run_members.tsv", sep="\t", dtype=str, keep_default_na=False)
    run = ["host", "runtime", "study", "key", "repetition"]
    members = members.merge(runs[[*run, "case", "meta"]], on=run, validate="many_to_one")
    cpus = len(os.sched_getaffinity(0))
    checked = 0
    for x in members.itertuples():
        ms = x.microservice
        expected = 1 if ms == "S" else (cpus if x.case == "2" else 1)  # Case 2 is unlimited
        assert x.threads == str(expected), (x.key, ms)
        outs = sorted((workdir / Path(x.meta).parent).glob(f"{x.role}-{ms}/*.out"))
        used = {m for p in outs for m in re.findall(r"\bthreads=(\d+)", p.read_text())}
        assert outs and used == {str(expected)}, (x.key, ms, used)
        checked += 1
    assert checked == 2 + 2 * 2 + 2


def test_report_describes_this_machine(workdir):
    # The host line is made from what the runs recorded; it must be this machine, read here.
    html = (workdir / "report/paper.html").read_text()
    cores, kernel = len(os.sched_getaffinity(0)), re.escape(platform.release())
    assert re.search(rf"reporthost \(.*?, {cores} cores?, .*?, Linux {kernel}\)", html)
    assert "Rendered" in html


def test_changing_the_report_source_reruns_only_the_report(workdir):
    qmd = workdir.parent / "src" / "report" / "paper.qmd"
    qmd.write_text(qmd.read_text() + "\nAn edited sentence.\n")  # an edit of the report source
    dry = snakemake(workdir, "-n", "report/paper.html")
    assert planned_jobs(dry.stdout) == {"report": 1}, dry.stdout[-2000:]
    snakemake(workdir, "--cores", "1", "report/paper.html")
    assert "An edited sentence." in (workdir / "report/paper.html").read_text()
    assert planned_jobs(snakemake(workdir, "-n", "report/paper.html").stdout) == {}


def test_image_records_of_the_old_layout_are_moved_under_the_host_and_nothing_reruns(workdir):
    """A results folder made before records were per host (results/images/<runtime>/): its
    records are this host's; they move, keep their times, and no image or run is redone."""
    new = workdir / "results/images/reporthost"
    times = {p.name: p.stat().st_mtime for p in (new / "docker").glob("*.json")}
    shutil.move(new / "docker", workdir / "results/images/docker")
    new.rmdir()
    dry = snakemake(workdir, "-n", "report/paper.html")
    assert planned_jobs(dry.stdout) == {}, dry.stdout[-2000:]
    assert "image record moved under its host: results/images/reporthost/docker/L.json" in dry.stderr
    assert {p.name: p.stat().st_mtime for p in (new / "docker").glob("*.json")} == times
    assert not (workdir / "results/images/docker").exists()


def test_editing_statistics_code_reruns_the_tables_not_the_runs(workdir):
    code = (
        workdir.parent
        / "src"
        / "scripts"
        / "interference"
        / "studies"
        / "pairs"
        / "statistics"
        / "__init__.py"
    )
    code.write_text(code.read_text() + "\n# an edit\n")
    jobs = planned_jobs(snakemake(workdir, "-n", "report/paper.html").stdout)
    assert "run" not in jobs and "build_image" not in jobs, jobs
    assert jobs["statistics_pairs"] == 1 and jobs["report"] == 1, jobs
    # The microservice parsers are inputs of parse_run too.
    parser = workdir.parent / "src" / "scripts" / "interference" / "parsers" / "stream.py"
    parser.write_text(parser.read_text() + "\n# an edit\n")
    jobs = planned_jobs(snakemake(workdir, "-n", "report/paper.html").stdout)
    assert jobs["parse_run"] == 6 and "run" not in jobs, jobs
