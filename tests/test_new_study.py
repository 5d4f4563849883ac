"""Plug-ins touch only their own files: in a copy of the pipeline, a new study kind (the tiny
tests/studies/startup/, one folder) and a new runtime (tests/runtimes/throwaway.py, its adapter
and two lines of the runtime registry: its import and its entry) run end to end together
(runs, parse, statistics, report), and the copy's git status shows exactly those files."""

import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, nothing_left, requires_engine

pytestmark = [pytest.mark.integration, requires_engine]


def test_a_dropped_in_study_runs_without_edits_elsewhere(tmp_path):
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    copy = tmp_path / "pipeline"
    for rel in tracked.stdout.splitlines():
        if (REPO / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, copy / rel)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(copy)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "the pipeline"], check=True)
    # The two plug-ins: a folder, a file and a registry line.
    shutil.copytree(REPO / "tests/studies/startup", copy / "scripts/interference/studies/startup")
    shutil.copy(REPO / "tests/runtimes/throwaway.py", copy / "scripts/interference/runtimes/throwaway.py")
    registry = copy / "scripts/interference/runtimes/__init__.py"
    text = registry.read_text().replace(
        "from interference.runtimes.docker import DockerRuntime\n",
        "from interference.runtimes.docker import DockerRuntime\n"
        "from interference.runtimes.throwaway import ThrowawayRuntime\n",
    )
    registry.write_text(
        text.replace(
            '    "docker": DockerRuntime,\n',
            '    "docker": DockerRuntime,\n    "throwaway": ThrowawayRuntime,\n',
        )
    )
    status = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True
    )
    touched = sorted(line[3:] for line in status.stdout.splitlines())
    assert touched == [
        "scripts/interference/runtimes/__init__.py",
        "scripts/interference/runtimes/throwaway.py",
        "scripts/interference/studies/startup/__init__.py",
        "scripts/interference/studies/startup/execute.py",
        "scripts/interference/studies/startup/parse.py",
        "scripts/interference/studies/startup/statistics.py",
    ]
    diff = subprocess.run([*git, "diff", "--numstat"], capture_output=True, text=True).stdout.split()
    assert diff[:2] == ["2", "0"]  # the registry: its import and its entry
    config = {
        "host": "testhost",
        "runtimes": ["docker", "throwaway"],
        "studies": {"startup": {"instances": [1, 2], "repetitions": 2}},
    }
    (copy / "new.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(copy / "Snakefile"), "-d", str(copy), "--cores", "2", "report/paper.html"]
        + ["--configfile", str(copy / "new.yaml")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for runtime in ("docker", "throwaway"):
        runs = copy / "results/raw/testhost" / runtime / "startup"
        metas = sorted(str(p.relative_to(runs)) for p in runs.glob("n*/rep*/meta.json"))
        assert metas == ["n1/rep1/meta.json", "n1/rep2/meta.json", "n2/rep1/meta.json", "n2/rep2/meta.json"]
    summary = pd.read_csv(copy / "results/stats/startup/summary.tsv", sep="\t")
    assert sorted(zip(summary["runtime"], summary["instances"], summary["n"])) == [
        ("docker", 1, 2), ("docker", 2, 2), ("throwaway", 1, 2), ("throwaway", 2, 2)
    ]  # fmt: skip
    assert (summary["mean"] > 0).all()
    html = (copy / "report/paper.html").read_text()
    assert "Start-to-exit time of N concurrent containers" in html
    assert "throwaway" in html
    assert nothing_left() == []
