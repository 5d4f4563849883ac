"""The time models' constants of the studies that start entities (containers/entity-times.yaml),
per study: what a run and each entity cost on a runtime, in the reference machine's seconds."""

from __future__ import annotations

import functools

import yaml

from interference import REPO_ROOT

PATH = REPO_ROOT / "containers" / "entity-times.yaml"


@functools.cache
def constants(study: str) -> dict:
    return yaml.safe_load(PATH.read_text())[study]


def per_runtime(study: str, key: str, runtime: str) -> float:
    """A study's per-runtime constant; a runtime not listed counts as Docker's."""
    table = constants(study)[key]
    return float(table.get(runtime, table.get("docker", 0.0)))
