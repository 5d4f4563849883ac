"""Reading results/stats/: environment.json and each study's TSVs (results/stats/<study>/<name>.tsv).

Ids stay strings ('' for none); the columns a reader declares numeric become numbers and the
flag columns booleans. The report reads nothing else of the pipeline's outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

FLAGS = ("higher_is_better", "reject")


def read_tsv(path: Path, numeric=(), flags=FLAGS) -> pd.DataFrame:
    """A generated TSV; numeric="auto" converts every column whose values all parse as numbers."""
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    df = df.apply(lambda column: column.str.strip())  # a hand-written table's padding is no part of an id
    if numeric == "auto":
        numeric = [c for c in df if (df[c] != "").any() and pd.to_numeric(df[c], errors="coerce").notna().sum()
                   == (df[c] != "").sum()]  # fmt: skip
    for c in numeric:
        if c in df:
            df[c] = pd.to_numeric(df[c].replace("", np.nan), errors="coerce")
    for c in flags:
        if c in df:
            df[c] = df[c].str.strip().str.lower().isin(["true", "1", "yes"])
    return df


class StatsDir:
    """One results/stats/ folder."""

    def __init__(self, root):
        self.root = Path(root)

    def environment(self) -> dict:
        p = self.root / "environment.json"
        return json.loads(p.read_text()) if p.exists() else {}

    def path(self, study: str, name: str) -> Path:
        return self.root / study / f"{name}.tsv"

    def table(self, study: str, name: str, numeric=(), flags=FLAGS) -> pd.DataFrame:
        """The table, or an empty frame when the study did not write it."""
        p = self.path(study, name)
        return read_tsv(p, numeric, flags) if p.exists() else pd.DataFrame()

    def tables_of(self, study: str) -> list[Path]:
        return sorted((self.root / study).glob("*.tsv"))


def vm_acceleration(env: dict) -> tuple[str, str] | None:
    """("tcg" or "kvm", why) as the `vm` runtime recorded it (engines.vm: details.acceleration,
    else its engine name), or None when the runs recorded neither."""
    vm = env.get("engines", {}).get("vm")
    if not vm:
        return None
    details = vm.get("details") or {}
    if isinstance(details, list):  # runs recorded by different versions: what any said
        details = {k: v for d in details if isinstance(d, dict) for k, v in d.items()}
    said = str(details.get("acceleration") or "") or str(vm.get("engine") or "")
    for accel in ("tcg", "kvm"):
        if accel in said.lower():
            why = (
                said.split("(", 1)[1].removesuffix(")")
                if "(" in said and said.lower().startswith(accel)
                else ""
            )
            return accel, why
    return None
