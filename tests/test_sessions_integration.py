"""Sessions end to end with real runs: Y-Cruncher's Case 1 saved as a session, its size changed
tenfold, run again: the report's Changes section calls the cell changed, for the worse; the
same comparison without leave to cross definitions is refused naming the key; and a second
session of the same definition, measured afresh, is compared as such."""

import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, nothing_left, requires_engine
from interference.stats.session_variance import verdict

# Beside the other integration tests (not exclusive): what it checks is the comparison's rule on
# whatever was measured, and a tenfold change, not that the machine's speed held between sessions.
pytestmark = [pytest.mark.integration, requires_engine]


def config(digits: int, **extra) -> dict:
    # Three runs of three iterations: the comparison's CI covers the variation between runs.
    pairs = {"microservices": ["Y"], "cases": ["1"], "iterations": 3, "repetitions": 3, "drift_check": False}
    return {
        "host": "sessionhost",
        "studies": {"pairs": pairs | {"sizes": {"Y": {"digits": digits}}}},
        **extra,
    }


def snakemake(work, target, cfg, name):
    path = work / f"{name}.yaml"
    work.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg))
    return subprocess.run(
        [
            SNAKEMAKE,
            "-s",
            str(REPO / "Snakefile"),
            "-d",
            str(work),
            "--cores",
            "2",
            target,
            "--configfile",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )


def save(work, name):
    out = work / "sessions" / f"{name}.tar.gz"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "interference.stores.sessions",
            "save",
            name,
            "--results",
            str(work / "results"),
            "--out",
            str(out),
        ],
        check=True,
        env={"PYTHONPATH": str(REPO / "scripts")},
    )
    return out


def test_a_real_change_is_found_and_a_fresh_session_of_the_same_definition_is_compared_as_such(tmp_path):
    work = tmp_path / "work"
    r = snakemake(work, "stats", config(20000), "small")
    assert r.returncode == 0, r.stderr[-3000:]
    small = save(work, "small")

    # Ten times the digits: slower, and another definition of the study.
    big = config(200000, compare_with=[str(small)])
    r = snakemake(work, "stats", big, "big-refused")
    assert r.returncode != 0
    log = (work / "results/logs/stats/pairs/changes.log").read_text()
    assert "sizes.Y.digits was 20000, this config has 200000" in log
    r = snakemake(work, "report/paper.html", big | {"compare_across_definitions": True}, "big")
    assert r.returncode == 0, r.stderr[-3000:]
    changes = pd.read_csv(work / "results/stats/pairs/changes.tsv", sep="\t")
    time = changes[changes["metric"] == "computation_time"].iloc[0]
    assert time["verdict"] == "changed" and time["change"] < -0.5, time.to_dict()
    assert "sizes.Y.digits: 20000 then, 200000 now" in time["definition"]
    html = (work / "report/paper.html").read_text()
    assert "against session small" in html and "The study's definition differs" in html

    # The same definition measured afresh: compared on the runs and iterations, with no definition
    # differing, and each verdict the rule's for its interval. Whether a cell is called changed is
    # the machine's: on 2026-11-27 Y measured 52 % slower minutes after (its speed moved, and the
    # comparison said so, rightly by its data). How rarely identical sessions are called changed
    # is checked on simulated sessions (test_session_variance.py).
    big_again = save(work, "big")
    for folder in ("raw", "parsed", "stats", "code"):
        shutil.rmtree(work / "results" / folder)
    r = snakemake(work, "stats", config(200000, compare_with=[str(big_again)]), "again")
    assert r.returncode == 0, r.stderr[-3000:]
    again = pd.read_csv(work / "results/stats/pairs/changes.tsv", sep="\t")
    means = again[again["quantity"] == "mean"]
    assert len(means) == 2 and again["definition"].isna().all(), again[["cell", "definition"]]
    for row in again.itertuples():
        assert row.verdict == verdict(row.change_ci_low, row.change_ci_high, row.threshold), row
    assert set(means["ci_method"].str.split(": ").str[1]) == {"runs and iterations"}
    assert nothing_left() == []
