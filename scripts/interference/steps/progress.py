"""The time left, said after each run: `Progress`, a thread of the snakemake process (started
by the Snakefile's onstart) that watches the plan's meta.json files and prints a line per
finished run, the estimate of what is left scaled by how the runs so far compared with theirs."""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from pathlib import Path

from interference.steps.estimate import PlannedRun, after_seconds, minutes


def _took(meta_path: str) -> float:
    try:
        meta = json.loads(Path(meta_path).read_text())
        return meta["finished"] - meta["started"]
    except (OSError, ValueError, KeyError):
        return 0.0


def _mtime(path: str) -> float:
    """The file's modification time, -inf when it does not exist."""
    try:
        return os.stat(path).st_mtime
    except FileNotFoundError:
        return -math.inf


class Progress(threading.Thread):
    """Prints "run 12 of 60 done, about 14 min left" whenever a planned run's meta.json appears."""

    def __init__(self, runs: list[PlannedRun], stream=None, poll_s: float = 2.0):
        super().__init__(daemon=True, name="interference-progress")
        self.runs, self.poll_s = runs, poll_s
        self.stream = stream or sys.stderr
        self.took: dict[str, float] = {}  # meta path -> seconds, read once per finished run
        # A planned run whose meta.json exists runs again (the drift check's): done when rewritten.
        # Read now, before any run can finish, not when the thread first looks.
        self.before = {r.meta: _mtime(r.meta) for r in runs}

    def line(self, done: list[PlannedRun]) -> str:
        finished = {r.meta for r in done}
        left = [r for r in self.runs if r.meta not in finished]
        for r in done:
            if r.meta not in self.took:
                self.took[r.meta] = _took(r.meta)
        # Scale what is left by how long the finished runs took against their estimates.
        took = sum(self.took[r.meta] for r in done if r.seconds)
        expected = sum(r.seconds for r in done if r.seconds)
        scale = min(max(took / expected, 0.5), 2.0) if took and expected else 1.0
        rest = sum(r.seconds for r in left if r.seconds is not None) * scale + after_seconds(len(left))
        text = f"run {len(done)} of {len(self.runs)} done, about {minutes(rest)} left"
        if any(r.seconds is None for r in left):
            text += " (without the runs that have no estimate)"
        if getattr(self.stream, "isatty", lambda: False)():
            width = 30
            filled = round(width * len(done) / len(self.runs))
            text = "[" + "#" * filled + "." * (width - filled) + "] " + text
        return text

    def run(self) -> None:
        done: list[PlannedRun] = []
        seen: set[str] = set()
        while len(done) < len(self.runs):
            # Only the runs not yet seen finished are looked at again.
            new = [r for r in self.runs if r.meta not in seen and _mtime(r.meta) > self.before[r.meta]]
            if new:
                done += new
                seen.update(r.meta for r in new)
                print(self.line(done), file=self.stream, flush=True)
            time.sleep(self.poll_s)
