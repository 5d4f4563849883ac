"""Saved sessions: today's results kept under a name, to compare later results with (config
`compare_with`; changes.py compares, the report's Changes section shows it).

  python -m interference.stores.sessions save NAME [--results results] [--out sessions/NAME.tar.gz]
  python -m interference.stores.sessions check [--stats-dir results/stats]

`save` packs one folder NAME/: session.json (format, name, host, when, the sha256 of every
file), environment.json (the host, engines, images and config the runs had) and, per study,
its parsed samples and statistics tables. `check` is the regression check: it prints every
cell whose change is beyond the threshold (results/stats/*/changes.tsv), and exits 1 if one of
the questions of results/stats/*/regression.tsv (today against two or more saved sessions of
its definition: each cell beyond its microservice's shift, and the shift;
stats/regression_check.py) lies beyond the threshold after Holm's correction over all of them,
so that the chance that it fails where nothing changed is 5 % however many cells it reads. With
one saved session a session's own shift is not told from a change, and nothing fails. A
session is read back only whole and unaltered (every file against its manifest); it is never
rerun, and may come from this host or another."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from interference.stores import tarballs
from interference.stores.checksums import sha256, verify_files

FORMAT = 1
MANIFEST = "session.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class SessionError(ValueError):
    """A session that cannot be saved or read; the message names the file and what is wrong."""


def _files(results: Path) -> list[Path]:
    env = results / "stats" / "environment.json"
    if not env.is_file():
        raise SessionError(f"{env} is missing: make the statistics first (snakemake ... stats)")
    samples = sorted((results / "parsed").glob("*/samples.tsv"))
    if not samples:
        raise SessionError(f"{results / 'parsed'} holds no study's samples.tsv: nothing to save")
    tables = sorted(p for s in samples for p in (results / "stats" / s.parent.name).glob("*.tsv"))
    return [env, *samples, *tables]


def save(name: str, results: Path, out: Path) -> Path:
    """Write the session tarball (complete or not at all: written beside, then renamed)."""
    if not NAME.fullmatch(name):
        raise SessionError(f"session name {name!r}: use letters, digits, '.', '_' and '-'")
    files = _files(results)
    env = json.loads(files[0].read_text())

    def arcname(p: Path) -> str:
        rel = p.relative_to(results)
        return "environment.json" if rel.parts[-1] == "environment.json" else str(rel)

    manifest = {
        "format": FORMAT,
        "name": name,
        "host": env.get("config", {}).get("host", ""),
        "saved_at": time.time(),
        "studies": sorted(p.parent.name for p in files if p.name == "samples.tsv"),
        "files": {arcname(p): sha256(p) for p in files},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    with tarfile.open(part, "w:gz") as tar:
        data = (json.dumps(manifest, indent=1) + "\n").encode()
        info = tarfile.TarInfo(f"{name}/{MANIFEST}")
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
        for p in files:
            tar.add(p, f"{name}/{arcname(p)}")
    part.rename(out)
    return out


@dataclass(frozen=True)
class Session:
    name: str
    host: str
    saved_at: float
    studies: tuple[str, ...]
    environment: dict
    root: Path  # the unpacked, verified folder

    def samples(self, study: str) -> Path:
        return self.root / "parsed" / study / "samples.tsv"


def load(source: Path, into: Path) -> Session:
    """Unpack a saved session into the folder `into` and verify it whole."""
    try:
        with tarfile.open(source) as tar:
            tarballs.extract(tar, into)
    except (OSError, tarfile.TarError) as e:
        raise SessionError(f"{source}: not a readable session ({e})") from None
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise SessionError(f"{source}: expected one session folder, found {len(tops)}")
    root = tops[0]
    try:
        manifest = json.loads((root / MANIFEST).read_text())
        listed = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SessionError(
            f"{source}: no readable {MANIFEST} ({e}); was it made by `sessions save`?"
        ) from None
    if manifest.get("format") != FORMAT:
        raise SessionError(f"{source}: session format {manifest.get('format')!r}, this code reads {FORMAT}")
    verify_files(root, listed, MANIFEST, f"session {source}", SessionError)
    return Session(
        name=manifest["name"],
        host=manifest["host"],
        saved_at=manifest["saved_at"],
        studies=tuple(manifest["studies"]),
        environment=json.loads((root / "environment.json").read_text()),
        root=root,
    )


# Against one saved session the interval covers runs and iterations, not the session's own
# shift: the regression job under act (2026-11-28 11:00), against the baseline its 08:54 run had
# saved with the same measuring code, called 4 of 208 cells changed so, by +22 % to +47 % (S
# beside S in Case 3a, NS beside NS in Case 2).
ONE_SESSION = (
    "not failing: fewer than two saved sessions of this definition, the variance between sessions unknown"
)
FAMILY_ALPHA = 0.05


def _rows(stats_dir: Path, table: str) -> list[dict]:
    rows = []
    for path in sorted(stats_dir.glob(f"*/{table}")):
        with open(path, newline="") as f:
            rows += [dict(r, study=path.parent.name) for r in csv.DictReader(f, delimiter="\t")]
    return rows


def changed_cells(stats_dir: Path) -> list[dict]:
    """Every row of every study's changes.tsv whose verdict is `changed`."""
    return [r for r in _rows(stats_dir, "changes.tsv") if r["verdict"] == "changed"]


def holm(p: list[float], alpha: float = FAMILY_ALPHA) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected, the family-wise error held at
    alpha. (statsmodels' multipletests gives the same, tested; it runs the garbage collector on
    every call, 60 ms, which the check's simulations call thousands of times.)"""
    order = sorted(range(len(p)), key=lambda i: p[i])
    reject = [False] * len(p)
    for rank, i in enumerate(order):
        if not p[i] <= alpha / (len(p) - rank):
            break
        reject[i] = True
    return reject


def failing(rows: list[dict], alpha: float = FAMILY_ALPHA) -> list[dict]:
    """The regression.tsv rows beyond their threshold after Holm's correction over all of them
    (a row without a p-value counts in the family and never fails)."""
    p = [_p(r.get("p_changed")) for r in rows]
    return [r for r, out in zip(rows, holm(p, alpha)) if out]


def _p(value) -> float:
    try:
        p = float(value)
    except (TypeError, ValueError):
        return 1.0
    return 1.0 if math.isnan(p) else p


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sv = sub.add_parser("save", help="save today's results as a named session")
    sv.add_argument("name")
    sv.add_argument("--results", type=Path, default=Path("results"))
    sv.add_argument("--out", type=Path)
    ck = sub.add_parser("check", help="exit 1 if a cell changed beyond its threshold, across sessions")
    ck.add_argument("--stats-dir", type=Path, default=Path("results/stats"))
    a = ap.parse_args(argv)
    if a.command == "save":
        try:
            out = save(a.name, a.results, a.out or Path("sessions") / f"{a.name}.tar.gz")
        except SessionError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"saved session {a.name}: {out}")
        return 0
    if not any(a.stats_dir.glob("*/changes.tsv")):
        print(f"error: no changes.tsv under {a.stats_dir}: set compare_with in the config", file=sys.stderr)
        return 2
    changed = changed_cells(a.stats_dir)
    for r in changed:
        print(
            f"changed: {r['study']} {r['cell']} against {r['session']}: "
            f"{float(r['change']):+.1%} (95 % CI {float(r['change_ci_low']):+.1%} to {float(r['change_ci_high']):+.1%})"
        )
    questions = _rows(a.stats_dir, "regression.tsv")
    if not questions:
        print(f"{len(changed)} cells changed beyond the threshold; {ONE_SESSION}")
        return 0
    fail = failing(questions)
    for r in fail:
        what = r["cell"] or r["subject"]
        print(
            f"failing: {r['study']} {what}, {r['question']}: {float(r['change']):+.1%} "
            f"(95 % CI {float(r['change_ci_low']):+.1%} to {float(r['change_ci_high']):+.1%}, "
            f"against {r['sessions']} sessions; p = {float(r['p_changed']):.2g}, beyond "
            f"±{float(r['threshold']):.0%} after Holm's correction over {len(questions)} questions)"
        )
    print(
        f"{len(changed)} cells changed beyond the threshold against a session; of {len(questions)} "
        f"questions against the saved sessions, {len(fail)} stay beyond it after Holm's correction"
    )
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
