"""The ping-pong study's checks of paper 003's findings (report/published/findings.yaml): a
layer's transfer rate against its baseline layer's (relative.tsv), at the smallest or largest
message size, or the mean over the sizes (cells), at the level its intervals cover (ci_level)."""

from __future__ import annotations

import pandas as pd

from interference.findings.inference import correlated_mean, mean_of
from interference.findings.pooling import pool
from interference.findings.verdict import NOT_RUN, CellEstimate, Measure, Skip, quantity, table_level


@quantity("ratio")
def pingpong_ratio(ctx, args: dict):
    t = ctx.table("relative")
    if t.empty:
        return Skip(NOT_RUN, "these results have no ping-pong study")
    for c in ("message_bytes", "n", "ratio", "ci_low", "ci_high"):
        t[c] = pd.to_numeric(t[c], errors="coerce")
    t = t[(t["layer"] == args["layer"]) & (t["baseline"] == args["baseline"])].sort_values("message_bytes")
    if t.empty:
        return Skip(NOT_RUN, f"these results have no {args['layer']} layer against {args['baseline']}")
    size = args.get("size", "all")
    if size != "all":
        t = t.iloc[[0]] if size == "smallest" else t.iloc[[-1]]
    by_cell = tuple(
        CellEstimate(
            f"m = {int(r['message_bytes']):,} B", r["ratio"], r["ci_low"], r["ci_high"], **table_level(r)
        )
        for _, r in t.iterrows()
    )
    sizes = ", ".join(c.label.removeprefix("m = ") for c in by_cell)
    what = f"transfer rate of {args['layer']} over {args['baseline']} (m = {sizes}{'; mean over the sizes' if len(t) > 1 else ''})"
    # The sizes run interleaved in the same runs: their mean is taken as perfectly correlated.
    mean = correlated_mean(by_cell, "mean", "sizes") if len(by_cell) > 1 else mean_of(by_cell)
    return Measure.of(mean, what, int(t["n"].min()), cells=len(t), by_cell=by_cell,
                      pooled=pool(by_cell) if len(t) > 1 else None)  # fmt: skip


CHECKS = {"pingpong_ratio": pingpong_ratio}
