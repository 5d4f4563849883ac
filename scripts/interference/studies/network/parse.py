"""The network study's parser: the client's iterations -> samples of its metrics."""

from __future__ import annotations

import pandas as pd

from interference import parsers
from interference.core.microservices import registry
from interference.core.samples import parse_iteration

# The columns of this study's samples.tsv, here and not in its statistics: parsing stays light.
SAMPLE_COLUMNS = [
    "host", "runtime", "microservice", "direction", "mode", "repetition", "iteration",
    "metric", "value", "unit", "higher_is_better", "start", "end", "status",
]  # fmt: skip


def parse(meta, raw_dir) -> pd.DataFrame:
    s = meta["settings"]
    ms = registry()[s["microservice"]]
    rows = [
        sample.row(
            host=s["host"],
            runtime=s["runtime"],
            microservice=ms.id,
            direction=s["direction"],
            mode=s["mode"],
            repetition=s["repetition"],
            iteration=it["iteration"],
            start=it["start"],
            end=it["end"],
        )
        for it in meta["iterations"]
        for sample in parse_iteration(it, raw_dir, parsers.get(ms.parser), ms.metrics, stderr=False)
    ]
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
