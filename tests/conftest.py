"""Shared test helpers: the repository root and a check for a running engine."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(__import__("sys").executable).parent / "snakemake")


def docker_answers() -> bool:
    return (
        shutil.which("docker") is not None
        and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    )


requires_engine = pytest.mark.skipif(
    not docker_answers(),
    reason="no Docker engine answers (make test starts one; see scripts/ensure-engine.sh)",
)


def leftover_containers() -> list[str]:
    r = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", "label=interference.run"],
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout.split()
