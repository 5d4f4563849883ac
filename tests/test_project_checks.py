"""Project hygiene that a reviewer would otherwise check by hand: the workflow lints clean,
is formatted, the GitHub workflow is valid, and conda envs pin what requirements.txt pins."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE

BIN = Path(sys.executable).parent


def run(*argv):
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_snakemake_lint_is_clean():
    r = run(SNAKEMAKE, "--lint")
    assert r.returncode == 0, r.stdout + r.stderr


def test_snakefiles_are_formatted():
    r = run(str(BIN / "snakefmt"), "--check", "Snakefile", "workflow/rules")
    assert r.returncode == 0, r.stdout + r.stderr


def test_python_is_formatted():
    r = run(str(BIN / "ruff"), "format", "--check", "scripts", "tests")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize(
    "workflow", sorted((REPO / ".github" / "workflows").glob("*.yml")), ids=lambda p: p.name
)
def test_github_workflow_is_valid(workflow):
    r = run(str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow))
    assert r.returncode == 0, r.stdout + r.stderr


def pip_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", line)
        if m:
            pins[m[1].lower()] = m[2]
    return pins


@pytest.mark.parametrize("env", sorted((REPO / "workflow" / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_conda_envs_pin_the_same_versions(env):
    pins = pip_pins()
    deps = yaml.safe_load(env.read_text())["dependencies"]
    checked = 0
    for dep in deps:
        if not isinstance(dep, str) or "=" not in dep:
            continue
        name, version = re.split(r"=+", dep, maxsplit=1)
        if name == "python":
            continue
        assert name.lower() in pins, f"{env.name}: {name} is not pinned in requirements.txt"
        assert pins[name.lower()] == version, (
            f"{env.name}: {name}={version}, requirements.txt {pins[name.lower()]}"
        )
        checked += 1
    assert checked > 0
