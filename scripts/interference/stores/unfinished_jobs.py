"""The outputs snakemake marked as started and never finished, read from its own record.

A forced rerun stopped mid-run leaves the old meta.json in place (update() in run.smk) and a
marker in .snakemake/incomplete/; the next command makes that run again, so the plan must count
it as to do although its meta.json exists. Snakemake's file persistence (9.x) names each marker
by the output's path in URL-safe base64, cut into pieces of the file system's longest name (all
but the last piece prefixed "@", as folders). Snakemake's own code is the reference in
tests/test_estimate.py, so a change of that layout fails there, not silently here."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path

MARKERS = Path(".snakemake/incomplete")
NOT_A_MARKER = {"migration_underway"}  # snakemake's own flag file in the same folder


def unfinished_outputs(markers: Path = MARKERS) -> set[str]:
    """Each output path (as the rule names it) that a marker under `markers` stands for."""
    found = set()
    for folder, _, names in os.walk(markers):
        pieces = [p.removeprefix("@") for p in Path(folder).relative_to(markers).parts]
        for name in names:
            if name in NOT_A_MARKER:
                continue
            try:
                found.add(base64.urlsafe_b64decode("".join(pieces) + name).decode())
            except (binascii.Error, UnicodeDecodeError):
                continue  # not one of snakemake's markers
    return found
