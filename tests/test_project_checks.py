"""Project hygiene that a reviewer would otherwise check by hand: the workflow lints clean,
the Python is formatted and lints clean by the chosen rules, the GitHub workflow is valid, and conda envs pin what requirements.txt pins."""

import ast
import importlib.metadata
import json
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


def test_snakemake_lint_is_clean(tmp_path):
    # In a folder of its own: the workflow's start moves an old results tree (the repository's
    # own results/ is a user's, never the tests').
    r = run(SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "--lint")
    assert r.returncode == 0, r.stdout + r.stderr


def test_snakefiles_are_formatted():
    r = run(str(BIN / "snakefmt"), "--check", "Snakefile", "workflow/rules")
    assert r.returncode == 0, r.stdout + r.stderr


def test_python_is_formatted():
    r = run(str(BIN / "ruff"), "format", "--check", "scripts", "tests", "benchmarks")
    assert r.returncode == 0, r.stdout + r.stderr


def test_python_lints_clean_by_the_chosen_rules():
    """ruff check with pyproject.toml's rule set (pyflakes, bugbear, pyupgrade, isort, simplify)."""
    r = run(str(BIN / "ruff"), "check", "--no-cache", "scripts", "tests", "benchmarks")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_lint_rules_catch_an_unused_import(tmp_path):
    (tmp_path / "bad.py").write_text("import os\n")
    r = run(str(BIN / "ruff"), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"), str(tmp_path))
    assert r.returncode == 1 and "F401" in r.stdout, r.stdout + r.stderr


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


def third_party_imports() -> set[str]:
    """Top-level names of the modules scripts/interference imports that are neither ours nor
    the standard library's."""
    names = set()
    for path in (REPO / "scripts" / "interference").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "interference"}


def test_one_environment_holds_every_import_of_the_steps():
    """--sdm conda runs every rule on workflow/envs/pipeline.yaml: each third-party module the
    package imports must come from a package it lists (import name -> distribution, as
    installed here), or a step fails at its first import."""
    envs = sorted((REPO / "workflow" / "envs").glob("*.yaml"))
    assert [e.name for e in envs] == ["pipeline.yaml"]
    listed = {re.split(r"=+", d)[0].lower() for d in yaml.safe_load(envs[0].read_text())["dependencies"]}
    distributions = importlib.metadata.packages_distributions()
    imports = third_party_imports()
    assert {"pandas", "scipy", "statsmodels", "yaml", "matplotlib", "bs4"} <= imports
    missing = {name for name in imports if not {d.lower() for d in distributions.get(name, [name])} & listed}
    assert missing == set()
    # Every rule names that environment.
    rules = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    # (a rule made in a loop, one per study, is written `rule:` with its name inside)
    defined = len(re.findall(r"^\s*rule(?: \w+)?:", rules, flags=re.M))
    assert rules.count("conda:") == defined and set(re.findall(r'"\.\./envs/([^"]+)"', rules)) == {
        "pipeline.yaml"
    }


def test_every_benchmark_script_starts():
    """benchmarks/: each script imports what it uses and answers --help (as its docstring runs it)."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": f"{REPO / 'scripts'}:{REPO / 'tests'}"}
    scripts = sorted((REPO / "benchmarks").glob("bench_*.py"))
    assert len(scripts) >= 15
    # Each run as its own program (runpy, __main__, argv) in one interpreter, which imports the
    # libraries they share once: a process each cost 21 s of the unit phase.
    driver = (
        "import contextlib, io, json, runpy, sys\n"
        "out = {}\n"
        "for path in sys.argv[1:]:\n"
        "    sys.argv, buf, code = [path, '--help'], io.StringIO(), None\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(buf):\n"
        "            runpy.run_path(path, run_name='__main__')\n"
        "    except SystemExit as e:\n"
        "        code = e.code\n"
        "    except Exception as e:\n"
        "        code = repr(e)\n"
        "    out[path] = [code, buf.getvalue()]\n"
        "print(json.dumps(out))\n"
    )
    r = subprocess.run([sys.executable, "-c", driver, *map(str, scripts)], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    answers = json.loads(r.stdout.splitlines()[-1])
    for script in scripts:
        code, text = answers[str(script)]
        assert code in (0, None) and "usage" in text, (script.name, code, text[-500:], r.stderr[-1000:])
