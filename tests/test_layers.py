"""The package's layers (pyproject.toml, [tool.importlinter]) hold: lint-imports (import-linter)
reads every import of scripts/interference and checks the contracts. A second check proves the
contracts can fail: a copy of the package whose host layer imports a step, whose rendering kit
imports a study, and whose network section imports scipy, breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

LINT = Path(sys.executable).with_name("lint-imports")


def lint(scripts: Path, config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(scripts)}
    return subprocess.run(
        [str(LINT), "--config", str(config), "--no-cache"], env=env, capture_output=True, text=True
    )


def test_the_layer_contracts_hold():
    out = lint(REPO / "scripts", REPO / "pyproject.toml")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 3 kept, 0 broken" in out.stdout


def test_a_lower_layer_importing_a_step_or_a_section_computing_breaks_them(tmp_path):
    scripts = tmp_path / "scripts"
    shutil.copytree(REPO / "scripts" / "interference", scripts / "interference",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    probe = scripts / "interference" / "host" / "probe.py"
    probe.write_text(probe.read_text() + "\nfrom interference.steps import config  # noqa\n")
    kit = scripts / "interference" / "rendering" / "kit" / "format.py"  # the kit knows no study
    kit.write_text(kit.read_text() + "\nfrom interference.studies.pairs import cases  # noqa\n")
    tables = scripts / "interference" / "studies" / "network" / "section" / "tables.py"
    tables.write_text(tables.read_text() + "\nimport scipy.stats  # noqa\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    out = lint(scripts, tmp_path / "pyproject.toml")
    assert out.returncode != 0
    assert "interference.host.probe -> interference.steps.config" in out.stdout
    assert "interference.rendering.kit.format -> interference.studies.pairs.cases" in out.stdout
    assert "Rendering code imports no statistics BROKEN" in out.stdout
    assert "interference.studies.network.section.tables -> scipy" in out.stdout
