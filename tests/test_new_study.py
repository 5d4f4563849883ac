"""A new study kind is one folder: the tiny tests/studies/startup/ dropped into a copy of
the pipeline runs end to end — runs, parse, statistics, report — with no other file edited."""

import shutil
import subprocess

import pandas as pd
import pytest
import yaml

from conftest import REPO, SNAKEMAKE, leftover_containers, requires_engine

pytestmark = [pytest.mark.integration, requires_engine]


def test_a_dropped_in_study_runs_without_edits_elsewhere(tmp_path):
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    copy = tmp_path / "pipeline"
    for rel in tracked.stdout.splitlines():
        if (REPO / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, copy / rel)
    shutil.copytree(REPO / "tests/studies/startup", copy / "scripts/interference/studies/startup")
    config = {"host": "testhost", "studies": {"startup": {"instances": [1, 2], "repetitions": 2}}}
    (copy / "new.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(copy / "Snakefile"), "-d", str(copy), "--cores", "2", "report/paper.html"]
        + ["--configfile", str(copy / "new.yaml")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    metas = sorted((copy / "results/raw/testhost/docker/startup").glob("n*/rep*/meta.json"))
    assert [str(p.relative_to(copy / "results/raw/testhost/docker/startup")) for p in metas] == [
        "n1/rep1/meta.json",
        "n1/rep2/meta.json",
        "n2/rep1/meta.json",
        "n2/rep2/meta.json",
    ]
    summary = pd.read_csv(copy / "results/stats/startup/summary.tsv", sep="\t")
    assert list(summary["instances"]) == [1, 2] and list(summary["n"]) == [2, 2]
    assert (summary["mean"] > 0).all()
    html = (copy / "report/paper.html").read_text()
    assert "Start-to-exit time of N concurrent containers" in html
    assert leftover_containers() == []
