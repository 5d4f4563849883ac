"""Runs whose cleanup did not finish, and the reaping of what they left.

A run is noted here (one small file per run, beside the measurement lock) before it makes
anything, and the note is removed only once everything labelled with its run id was removed.
If the cleanup could not run to its end (the engine was down, the machine lost power), the note
stays; the next run on this host, holding the measurement lock, removes what that run left
(by its label, with the runtime it ran on) before it starts, and says so in its meta.json."""

from __future__ import annotations

import json
import os
from pathlib import Path

from interference import runtimes
from interference.core.labels import RUN_LABEL
from interference.host.locks import LOCK_PATH

NOTES = Path(os.environ.get("INTERFERENCE_UNFINISHED", LOCK_PATH + ".unfinished"))


def note(run_id: str, runtime: str, options: dict | None, notes: Path = NOTES) -> None:
    notes.mkdir(parents=True, exist_ok=True)
    (notes / f"{run_id}.json").write_text(
        json.dumps({"run_id": run_id, "runtime": runtime, "options": options or {}})
    )


def done(run_id: str, notes: Path = NOTES) -> None:
    (notes / f"{run_id}.json").unlink(missing_ok=True)


def reap(notes: Path = NOTES) -> list[str]:
    """Remove what every noted run left; its note goes once that succeeded. Call under the
    measurement lock (no run of this host is live then)."""
    removed = []
    for path in sorted(notes.glob("*.json")) if notes.is_dir() else []:
        try:
            run = json.loads(path.read_text())
            runtime = runtimes.get(run["runtime"], run["options"])
            things = runtime.remove_labelled(RUN_LABEL, run["run_id"])
        except Exception as e:  # noqa: BLE001 - a note that cannot be acted on now is kept for later
            removed.append(f"could not reap run {path.stem}: {e}")
            continue
        removed += [f"{thing} (left by run {run['run_id']})" for thing in things]
        path.unlink(missing_ok=True)
    return removed
