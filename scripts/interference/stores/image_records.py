"""Where image records live: results/images/<host>/<runtime>/<image>.json. A host's engine holds
its images, so hosts sharing one results folder (the nodes of a cluster) keep their own records.

Records of the older layout (results/images/<runtime>/<image>.json, from when a results folder
belonged to one host) are that host's: `migrate` moves them under it, keeping their times, so a
checkout made before keeps its images and runs (nothing is rebuilt or rerun)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def record_path(host: str, runtime: str, image: str) -> str:
    return f"results/images/{host}/{runtime}/{image}.json"


def migrate(images: Path, host: str, runtime_names: Iterable[str]) -> list[Path]:
    """Move each results/images/<runtime>/*.json under `host`; returns the records moved. A record
    the host already has in the new layout is kept, and the old one left where it is."""
    moved = []
    for runtime in sorted(set(runtime_names)):
        old = images / runtime
        if not old.is_dir():
            continue
        new = images / host / runtime
        for record in sorted(old.glob("*.json")):
            target = new / record.name
            if target.exists():
                continue
            new.mkdir(parents=True, exist_ok=True)
            os.replace(record, target)  # a rename: its mtime stays, so nothing downstream reruns
            moved.append(target)
        if not any(old.iterdir()):
            old.rmdir()
    return moved
