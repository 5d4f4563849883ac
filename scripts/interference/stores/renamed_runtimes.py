"""A results tree made before a runtime was renamed (core/runtime_names.py), moved to the new name,
so that nothing measured is lost or run again: each tree's <host>/<old>/ folder becomes
<host>/<new>/, and the records that name the runtime say the new name (each run's meta.json
settings, each image record, the host's run ledger). The meta.json files are rewritten after the
image records, so a run stays newer than its image (it is not run again) and its parse, older than
it now, runs again and writes the new name into the samples."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

from interference.stores.durations import LEDGER_COLUMNS

# The folders of a results tree whose second level is the runtime: results/<tree>/<host>/<runtime>/.
TREES = ("raw", "parsed", "logs/run", "logs/parse", "images", "logs/images")


def _move(old: Path, new: Path) -> None:
    """old's contents under new: renamed whole when new is absent, else entry by entry (an entry
    new already has is left where it is, in old)."""
    if not new.exists():
        os.rename(old, new)
        return
    for entry in sorted(old.iterdir()):
        target = new / entry.name
        if entry.is_dir() and target.is_dir():
            _move(entry, target)
        elif not target.exists():
            os.rename(entry, target)
    if not any(old.iterdir()):
        old.rmdir()


def _write(path: Path, text: str) -> None:
    part = path.with_name(f"{path.name}.{os.getpid()}.part")  # whole or not at all
    part.write_text(text)
    shutil.copymode(path, part)
    os.replace(part, path)


def _rename_in_json(path: Path, keys: tuple[str, ...], old: str, new: str, indent: int) -> bool:
    record = json.loads(path.read_text())
    holder = record
    for key in keys[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or holder.get(keys[-1]) != old:
        return False
    holder[keys[-1]] = new
    _write(path, json.dumps(record, indent=indent) + "\n")  # indented as its writer does
    return True


def _rename_in_ledger(path: Path, old: str, new: str) -> bool:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    moved = [r for r in rows if r.get("runtime") == old]
    for r in moved:
        r["runtime"] = new
        r["settings"] = json.dumps({**json.loads(r["settings"]), "runtime": new}, sort_keys=True)
    if moved:
        out = io.StringIO()
        w = csv.DictWriter(out, LEDGER_COLUMNS, delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        _write(path, out.getvalue())
    return bool(moved)


def migrate(results: Path, renamed: dict[str, str]) -> list[str]:
    """Move every runtime of `renamed` (old -> new) to its new name in the results tree; returns
    what was moved or rewritten, for the log."""
    done = []
    for old, new in renamed.items():
        for tree in TREES:
            for host_dir in sorted(p for p in (results / tree).glob("*") if p.is_dir()):
                if (host_dir / old).is_dir():
                    _move(host_dir / old, host_dir / new)
                    done.append(f"{host_dir / old} -> {host_dir / new}")
        records = [p for p in sorted((results / "images").glob(f"*/{new}/*.json"))
                   if _rename_in_json(p, ("runtime",), old, new, indent=2)]  # fmt: skip
        metas = [p for p in sorted((results / "raw").glob(f"*/{new}/**/meta.json"))
                 if _rename_in_json(p, ("settings", "runtime"), old, new, indent=1)]  # fmt: skip
        ledgers = [p for p in sorted((results / "durations").glob("*.tsv")) if _rename_in_ledger(p, old, new)]
        if records or metas or ledgers:
            done.append(
                f"runtime {old!r} renamed {new!r} in {len(records)} image records, {len(metas)} run records "
                f"and {len(ledgers)} run ledgers"
            )
    return done
