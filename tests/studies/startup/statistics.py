"""The startup study's one table: the start-to-exit time per N."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from interference.stats.descriptive import describe

GROUP = ["host", "runtime", "instances", "metric"]


def summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    samples = pd.read_csv(inputs["samples"], sep="\t", dtype=str, keep_default_na=False)
    return describe(samples, GROUP)
