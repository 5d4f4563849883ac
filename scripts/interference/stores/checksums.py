"""The sha256 of a file, and the check that an unpacked archive holds exactly the files its
manifest lists, each with its sha256 (saved sessions and imported results)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_files(root: Path, listed: dict, manifest: str, what: str, error: type = ValueError) -> None:
    """Every file the manifest lists is under root with its sha256, and nothing else is (the
    manifest itself aside); else `error` naming `what`, e.g. "partial import of edge: ..."."""
    present = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} - {manifest}
    if missing := sorted(set(listed) - present):
        raise error(f"partial {what}: {len(missing)} listed files missing, e.g. {missing[0]}")
    if extra := sorted(present - set(listed)):
        raise error(f"{what}: {len(extra)} files not in its manifest, e.g. {extra[0]}")
    for rel, digest in listed.items():
        if sha256(root / rel) != digest:
            raise error(f"corrupt {what}: {rel} does not match its sha256 in the manifest")
