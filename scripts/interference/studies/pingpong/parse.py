"""The pingpong study's parser: each load test (iteration, message size) -> samples of the load
generator's metrics and of the CPU each side used over it."""

from __future__ import annotations

import pandas as pd

from interference import parsers
from interference.core.microservices import Metric, registry
from interference.core.samples import OK, metric_samples, read_output
from interference.studies.pingpong import MICROSERVICE

# The columns of this study's samples.tsv, here and not in its statistics: parsing stays light.
SAMPLE_COLUMNS = [
    "host", "runtime", "layer", "message_bytes", "repetition", "iteration",
    "metric", "value", "unit", "higher_is_better", "start", "end", "status",
]  # fmt: skip

SIDES = ("ping", "pong", "ab")


def parse(meta, raw_dir) -> pd.DataFrame:
    s = meta["settings"]
    ms = registry()[MICROSERVICE]
    metrics = ms.metrics + tuple(Metric(f"{k}_cpu", "cores", False) for k in SIDES)
    by_test = {(t["iteration"], t["message_bytes"]): t for t in meta["tests"]}
    rows = []
    for i in range(1, s["iterations"] + 1):
        for m in s["message_sizes"]:
            t = by_test.get((i, m))
            values, status = {}, meta.get("not_ready") or "not run"
            if t is not None:
                stdout = raw_dir / t["stdout"]
                values, status = read_output(parsers.get(ms.parser), stdout, stdout.with_suffix(".err"))
                status = status if t["rc"] == 0 else f"ab exit {t['rc']}"
                seconds = t["end"] - t["start"]
                for k in SIDES:
                    if t.get(f"{k}_cpu_s") is not None and seconds > 0:
                        values[f"{k}_cpu"] = t[f"{k}_cpu_s"] / seconds
            for sample in metric_samples(values if status == OK else {}, status, metrics):
                rows.append(
                    sample.row(
                        host=s["host"],
                        runtime=s["runtime"],
                        layer=s["layer"],
                        message_bytes=m,
                        repetition=s["repetition"],
                        iteration=i,
                        start=t["start"] if t else None,
                        end=t["end"] if t else None,
                    )  # fmt: skip
                )
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
