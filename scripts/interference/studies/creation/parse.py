"""The creation study: one run's raw files -> tidy samples (Study.parse)."""

from __future__ import annotations

import pandas as pd

# The columns of this study's samples.tsv, here and not in its statistics: parsing stays light.
SAMPLE_COLUMNS = [
    "host", "runtime", "variant", "entities", "children", "repetition", "entity",
    "metric", "value", "unit", "higher_is_better", "status",
]  # fmt: skip


def parse(meta, raw_dir) -> pd.DataFrame:
    s = meta["settings"]
    rows = []
    for e in meta["entities"]:
        ok = e["status"] == "ok"
        for metric, key in (
            ("created_to_exit", "created_to_exit_s"),
            ("setup", "setup_s"),
            ("removed", "removed_s"),
        ):
            rows.append(
                {
                    "host": s["host"],
                    "runtime": s["runtime"],
                    "variant": s.get("child_image", ""),
                    "entities": s["entities"],
                    "children": s["children"],
                    "repetition": s["repetition"],
                    "entity": e["entity"],
                    "metric": metric,
                    "value": e.get(key) if ok else None,
                    "unit": "s",
                    "higher_is_better": False,
                    "status": e["status"],
                }
            )
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
