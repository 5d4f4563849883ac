"""The durations ledger: how long each run took on a host, results/durations/<host>.tsv, which
the runner extends after every run and which survives deleting the raw results; and the history
the estimate reads from it and from the runs' meta.json files."""

from __future__ import annotations

import csv
import fcntl
import json
import os
from pathlib import Path

LEDGER_COLUMNS = ("settings", "study", "runtime", "key", "repetition", "seconds", "finished")


def settings_id(settings: dict) -> str:
    """What makes two runs the same run for the estimate: their settings but the repetition."""
    return json.dumps({k: v for k, v in settings.items() if k != "repetition"}, sort_keys=True)


def ledger_path(results: Path, host: str) -> Path:
    return results / "durations" / f"{host}.tsv"


def record(meta: dict, results: Path = Path("results")) -> None:
    """Add a finished run to its host's ledger (the runner calls it after meta.json)."""
    s = meta["settings"]
    path = ledger_path(results, s["host"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", newline="") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # runners ending at once: one header, whole lines
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        if os.fstat(f.fileno()).st_size == 0:
            w.writerow(LEDGER_COLUMNS)
        w.writerow(
            [settings_id(s), s["study"], s["runtime"], s["key"], s["repetition"]]
            + [f"{meta['finished'] - meta['started']:.2f}", f"{meta['finished']:.0f}"]
        )


def history(results: Path, host: str) -> dict[str, list[float]]:
    """Seconds each run took on this host before, by settings_id."""
    seen: dict[tuple[str, float], float] = {}  # (settings, finished) -> seconds: each run once
    for meta_path in (results / "raw" / host).rglob("meta.json"):
        try:
            meta = json.loads(meta_path.read_text())
            sid, finished = settings_id(meta["settings"]), round(meta["finished"])
            seen[(sid, finished)] = meta["finished"] - meta["started"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a run written by an older version or damaged: no history from it
    ledger = ledger_path(results, host)
    if ledger.exists():
        with ledger.open(newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                try:
                    seen.setdefault((row["settings"], round(float(row["finished"]))), float(row["seconds"]))
                except (KeyError, TypeError, ValueError):
                    continue
    out: dict[str, list[float]] = {}
    for (sid, _), seconds in seen.items():
        out.setdefault(sid, []).append(seconds)
    return out
