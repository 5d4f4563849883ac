"""Parse one run's raw artifacts (its meta.json and raw files) into tidy sample rows.

Columns: host, runtime, case, target, partner, repetition, member, iteration, metric, value,
unit, higher_is_better, start, end, in_overlap, status. A failed iteration or an unusable
output becomes rows with an empty value and a status saying what went wrong, and a log line
naming the file: never a silent number, never a crash of the whole parse.

  python -m interference.studies.pairs.parse META.json OUT.tsv          one run
  python -m interference.studies.pairs.parse --merge OUT.tsv IN.tsv...   the union of all runs"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pandas as pd

from interference import parsers
from interference.microservices import registry

COLUMNS = [
    "host",
    "runtime",
    "case",
    "target",
    "partner",
    "repetition",
    "member",
    "iteration",
    "metric",
    "value",
    "unit",
    "higher_is_better",
    "start",
    "end",
    "in_overlap",
    "status",
]
log = logging.getLogger("parse")


def parse_run(meta_path: Path) -> pd.DataFrame:
    meta = json.loads(meta_path.read_text())
    s = meta["settings"]
    raw_dir = meta_path.parent
    ms = registry()
    members = [m["microservice"] for m in meta["members"]]
    rows = []
    for k, member in enumerate(meta["members"]):
        target = ms[member["microservice"]]
        partner = members[1 - k] if len(members) == 2 else ""
        parse = parsers.get(target.parser)
        for it in member["iterations"]:
            values, status = {}, it["status"]
            if status == "ok":
                try:
                    out = (raw_dir / it["stdout"]).read_text(errors="replace")
                    err = (raw_dir / it["stderr"]).read_text(errors="replace")
                    values = parse(out, err)
                except (parsers.ParseError, OSError) as e:
                    status = str(e) if isinstance(e, parsers.ParseError) else "missing output"
            if status != "ok":
                log.warning("%s: %s", raw_dir / it["stdout"], status)
            for metric in target.metrics:
                value, row_status = values.get(metric.name), status
                if isinstance(value, parsers.ParseError):  # this metric alone failed
                    value, row_status = None, str(value)
                    log.warning("%s: %s", raw_dir / it["stdout"], row_status)
                elif status == "ok" and value is None:
                    row_status = "metric missing"
                    log.warning("%s: metric %s missing", raw_dir / it["stdout"], metric.name)
                rows.append(
                    {
                        "host": s["host"],
                        "runtime": s["runtime"],
                        "case": s["case"],
                        "target": target.id,
                        "partner": partner,
                        "repetition": s["repetition"],
                        "member": member["member"],
                        "iteration": it["iteration"],
                        "metric": metric.name,
                        "value": value,
                        "unit": metric.unit,
                        "higher_is_better": metric.higher_is_better,
                        "start": it["start"],
                        "end": it["end"],
                        "in_overlap": it["in_overlap"],
                        "status": row_status,
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def write(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, sep="\t", index=False, float_format="%.6f")


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(
        path, sep="\t", dtype={"case": str, "partner": str}, keep_default_na=False, na_values={"value": [""]}
    )


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    if argv and argv[0] == "--merge":
        out, inputs = Path(argv[1]), [Path(p) for p in argv[2:]]
        frames = [read(p) for p in inputs]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
        write(df, out)
        log.info("%d samples from %d runs -> %s", len(df), len(inputs), out)
        return 0
    meta, out = Path(argv[0]), Path(argv[1])
    df = parse_run(meta)
    write(df, out)
    bad = (df["status"] != "ok").sum()
    log.info("%s: %d rows, %d not ok -> %s", meta, len(df), bad, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
