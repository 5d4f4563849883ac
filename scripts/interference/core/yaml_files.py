"""YAML files of the repository read once per process (schemas, shipped configs)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml


@functools.cache
def _parsed(path: Path):
    return yaml.safe_load(path.read_text())


def load_once(path: Path):
    """The file's YAML, parsed at its first read in this process (a budgeted plan validates
    hundreds of candidate configs against the same schemas); a copy, so that checking, which
    fills defaults in, never changes what the next caller reads."""
    return copy.deepcopy(_parsed(Path(path)))
