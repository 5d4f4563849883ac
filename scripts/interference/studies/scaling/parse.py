"""The scaling study's parser: each instance's iterations -> samples of execution_time."""

from __future__ import annotations

import pandas as pd

from interference import parsers
from interference.core.microservices import registry
from interference.core.samples import parse_iteration
from interference.studies.scaling import MICROSERVICE

# The columns of this study's samples.tsv, here and not in its statistics: parsing stays light.
SAMPLE_COLUMNS = [
    "host", "runtime", "instances", "repetition", "instance", "iteration",
    "metric", "value", "unit", "higher_is_better", "start", "end", "status",
]  # fmt: skip


def parse(meta, raw_dir) -> pd.DataFrame:
    s = meta["settings"]
    ms = registry()[MICROSERVICE]
    metrics = tuple(m for m in ms.metrics if m.name == "execution_time")
    rows = [
        sample.row(
            host=s["host"],
            runtime=s["runtime"],
            instances=s["instances"],
            repetition=s["repetition"],
            instance=inst["instance"],
            iteration=it["iteration"],
            start=it["start"],
            end=it["end"],
        )
        for inst in meta["instances"]
        for it in inst["iterations"]
        for sample in parse_iteration(it, raw_dir, parsers.get(ms.parser), metrics, stderr=False)
    ]
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
