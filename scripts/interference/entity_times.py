"""The time models' constants of the studies that start entities (containers/entity-times.yaml):
what one entity of a runtime costs to start and remove, and the fixed parts of their runs."""

from __future__ import annotations

import functools

import yaml

from interference import REPO_ROOT

PATH = REPO_ROOT / "containers" / "entity-times.yaml"


@functools.cache
def constants() -> dict:
    return yaml.safe_load(PATH.read_text())


def start_s(runtime: str) -> float:
    """One entity's start and removal; a runtime not listed counts as Docker's."""
    starts = constants()["start_s"]
    return float(starts.get(runtime, starts["docker"]))
