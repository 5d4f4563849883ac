"""The startup study's parser: one sample per run, its start-to-exit time."""

from __future__ import annotations

import pandas as pd
from interference.core.samples import OK, Sample


def parse(meta, raw_dir):
    s = meta["settings"]
    ok = meta["n_failed"] == 0
    status = OK if ok else f"exit codes {meta['exit_codes']}"
    sample = Sample("seconds", meta["seconds"] if ok else None, "s", False, status)
    return pd.DataFrame([sample.row(**{k: s[k] for k in ("host", "runtime", "instances", "repetition")})])
