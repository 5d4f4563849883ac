"""Runs that fail outside the benchmark: what an interrupted cleanup left (the engine was down
when the run ended) is reaped by the next run of the host, which says so; a full disk ends a run
with one line naming the folder, no meta.json and no traceback."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, left_by, requires_engine

# Exclusive: it leaves a labelled container outside any run on purpose, which another
# integration test's check for leftovers would see. The unit tests beside it start host
# processes of their own, so it checks only its runs' leftovers (left_by).
pytestmark = [pytest.mark.integration, pytest.mark.exclusive, requires_engine]


def test_leftovers_are_reaped_and_a_full_disk_is_one_line(tmp_path):
    notes = tmp_path / "unfinished"
    env = dict(os.environ, INTERFERENCE_UNFINISHED=str(notes))
    cfg = {
        "host": "reaphost",
        "studies": {"pairs": {"microservices": ["Y"], "cases": ["1"], "iterations": 1}},
    }
    cfg["studies"]["pairs"] |= {"drift_check": False, "sizes": {"Y": {"digits": 10000}}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    meta = "results/raw/reaphost/docker/pairs/case1/Y/rep1/meta.json"

    def run(*extra):
        argv = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "--cores", "1", meta, *extra]
        r = subprocess.run(
            [*argv, "--configfile", str(tmp_path / "c.yaml")], capture_output=True, text=True, env=env
        )
        assert r.returncode == 0, r.stderr[-3000:]

    run()
    assert not any(notes.glob("*.json"))  # a run that cleaned up leaves no note
    # A run whose cleanup never came: its container is still there, its note too.
    image = json.loads((tmp_path / "results/images/reaphost/docker/Y.json").read_text())["ref"]
    subprocess.run(
        ["docker", "run", "-d", "--label", "interference.run=deadbeef0000", "--name", "interference-deadbeef0000-x",
         "--entrypoint", "sleep", image, "600"],
        check=True, capture_output=True,
    )  # fmt: skip
    notes.mkdir(exist_ok=True)
    (notes / "deadbeef0000.json").write_text(
        json.dumps({"run_id": "deadbeef0000", "runtime": "docker", "options": {}})
    )
    run("--forcerun", meta)
    recorded = json.loads((tmp_path / meta).read_text())
    assert any("left by run deadbeef0000" in r for r in recorded["reaped_before"]), recorded["reaped_before"]
    log = (tmp_path / "results/logs/run/reaphost/docker/pairs/case1/Y/rep1.log").read_text()
    assert "reaped: container" in log and "deadbeef0000" in log
    assert not any(notes.glob("*.json")) and left_by(["deadbeef0000", recorded["run_id"]]) == []

    # A full disk: a 16 KiB file system for the run's raw folder.
    disk = tmp_path / "full"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)], check=True)
    try:
        settings = dict(recorded["settings"], repetition=2)
        r = subprocess.run(
            [sys.executable, "-m", "interference.steps.runner", "--study", "pairs", "--settings", json.dumps(settings),
             "--images", str(tmp_path / "results/images/reaphost/docker/Y.json"), "--meta", str(disk / "run/meta.json")],
            capture_output=True, text=True, env=dict(env, PYTHONPATH=str(REPO / "scripts")), cwd=tmp_path,
        )  # fmt: skip
        assert not (disk / "run/meta.json").exists()
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    [line] = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert "no space left on the device of" in line and "every finished run is kept" in line
    [started] = [x.split()[1].rstrip(":") for x in r.stdout.splitlines() if x.startswith("run ")]
    assert (tmp_path / meta).exists() and left_by([started]) == []
