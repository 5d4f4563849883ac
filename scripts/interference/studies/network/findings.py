"""The network study's checks of paper 001's findings (report/published/findings.yaml): a
runtime's and mode's throughput or latency against bare metal's (relative.tsv), or against
another runtime's or mode's (a delta-method CI from the two rows), at the level the runs allow."""

from __future__ import annotations

import math

import pandas as pd

from interference.findings.inference import ITERATIONS, RUNS
from interference.findings.verdict import (
    NOT_RUN,
    NOT_TESTABLE,
    Measure,
    Skip,
    quantity,
    ratio_from_summaries,
    table_level,
)  # fmt: skip
from interference.stores.stats_tables import vm_acceleration
from interference.studies.network import published

METRIC_INDEX = {"throughput": 0, "latency": 1}  # of published.relative's pair; the paper has no other


def compared(args: dict) -> tuple[tuple[str, str], tuple[str, str] | None]:
    """A finding's (runtime, mode), and what it is over: another (runtime, mode), or None for bare
    metal's row of its direction."""
    a = (args["runtime"], args["mode"])
    if "over_runtime" not in args and "over_mode" not in args:
        return a, None
    return a, (args.get("over_runtime", a[0]), args.get("over_mode", a[1]))


def published_ratio(args: dict) -> float | None:
    """The paper's value of a finding's ratio (Tables II-V), or None where it has none."""
    if args["metric"] not in METRIC_INDEX:
        return None
    a, over = compared(args)
    direction = args.get("direction", "to-host")
    rel = [
        published.relative(published.entity_of(rt), direction, mode)
        for rt, mode in [a, *([over] if over else [])]
    ]
    if any(r is None for r in rel):
        return None
    values = [r[METRIC_INDEX[args["metric"]]] for r in rel]
    return values[0] / values[1] if over else values[0]


@quantity("ratio")
def network_ratio(ctx, args: dict):
    t = ctx.table("relative")
    if t.empty:
        return Skip(NOT_RUN, "these results have no network study")
    for c in ("n", "mean", "sd", "ratio", "ci_low", "ci_high", "runs", "run_sd"):
        t[c] = pd.to_numeric(t.get(c, math.nan), errors="coerce")
    direction = args.get("direction", "to-host")
    t = t[(t["metric"] == args["metric"]) & (t["direction"] == direction)]

    def row(runtime, mode):
        r = t[(t["runtime"] == runtime) & (t["mode"] == mode)]
        return r.iloc[0] if len(r) else None

    key, over = compared(args)
    a = row(*key)
    b = None if over is None else row(*over)
    if a is None or (over is not None and b is None):
        looked = [(key, a)] + ([(over, b)] if over else [])
        missing = [f"{rt} in mode {m}" for (rt, m), r in looked if r is None]
        return Skip(
            NOT_RUN, f"these results have no {args['metric']} of {' or '.join(missing)} ({direction})"
        )
    if over is None and a["reference"] == "/".join((key[0], direction, key[1])):
        return Skip(NOT_RUN, f"{key[0]} in mode {key[1]} is the reference its ratio is taken over ({a['reference']}): "
                    "bare metal's host-to-host row did not run")  # fmt: skip
    if "vm" in (key[0], (over or key)[0]) and (vm_acceleration(ctx.env) or ("",))[0] == "tcg":
        return Skip(NOT_TESTABLE, "the VM ran under TCG, an emulator: its network path is not a hypervisor's")
    paper = published_ratio(args)
    source = published.REMOTE_SOURCE if direction == "to-remote" else published.SOURCE
    cite = {"published": paper, "published_from": source if paper is not None else ""}
    if over is None:
        return Measure(f"{args['metric']} of {args['runtime']} ({args['mode']}) over {a['reference']}",
                       float(a["ratio"]), float(a["ci_low"]), float(a["ci_high"]), int(a["n"]), **cite,
                       **table_level(a))  # fmt: skip
    sd, n, level = two_rows_level(a, b)
    est, low, high = ratio_from_summaries(a["mean"], a[sd], a[n], b["mean"], b[sd], b[n])
    return Measure(f"{args['metric']} of {args['runtime']} ({args['mode']}) over {over[0]} ({over[1]})",
                   est, low, high, int(min(a["n"], b["n"])), **cite, level=level,
                   df=max(min(a[n], b[n]) - 1, 1))  # the t df ratio_from_summaries took  # fmt: skip


def two_rows_level(a: pd.Series, b: pd.Series) -> tuple[str, str, str]:
    """Which columns a ratio of two rows takes its spread and count from, and the level that
    covers: the run means' SD and the runs where both rows have 2 runs or more, else the
    iterations' (a table made before the runs were counted ran one run a cell)."""
    runs = [float(r.get("runs", math.nan)) for r in (a, b)]
    if all(math.isfinite(k) and k >= 2 for k in runs):
        return "run_sd", "runs", RUNS
    return "sd", "n", ITERATIONS


CHECKS = {"network_ratio": network_ratio}
