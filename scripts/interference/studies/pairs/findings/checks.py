"""The pair study's checks of the papers' findings: each gives our value of a claim's quantity
with its 95 % CI (findings.verdict.Measure) and the evidence behind it, or why it cannot (Skip):
mean IR, a contrast of cases or of partners, same-kind against mixed pairs, the best cell, the
share of the paper's directions we agree with, and the limit's own effect (Case 1u against 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.findings.pooling import difference, pool
from interference.findings.verdict import (
    NOT_RUN,
    CellEstimate,
    Measure,
    Skip,
    ratio_from_summaries,
)
from interference.report.format import pct
from interference.studies.pairs.cases import UNLIMITED
from interference.studies.pairs.findings.cells import _label, _missing, _n, _num, cells
from interference.studies.pairs.findings.evidence import explain
from interference.studies.pairs.findings.paper_values import _published_mean


def ir_cells(t: pd.DataFrame) -> tuple[CellEstimate, ...]:
    """Each IR cell of interference.tsv's rows as a CellEstimate."""
    return tuple(CellEstimate(_label(r), r["ir"], r["ir_ci_low"], r["ir_ci_high"]) for _, r in t.iterrows())


def pooled_measure(what: str, by_cell: tuple[CellEstimate, ...], n: int, **kw) -> Measure:
    """A measure over cells: their random-effects mean (findings.pooling) and the cells."""
    p = pool(by_cell)
    return Measure(what, p.estimate, p.low, p.high, n, len(by_cell), by_cell=by_cell, pooled=p, **kw)


def mean_ir(ctx, args: dict):
    t = cells(ctx, args)
    if t.empty:
        return _missing(ctx, args)
    what = (
        "IR of " + _label(t.iloc[0])
        if len(t) == 1
        else f"random-effects mean IR over {len(t)} pairings and cases"
    )
    pub, pub_from = _published_mean(ctx, args)
    return pooled_measure(what, ir_cells(t), _n(t), published=pub, published_from=pub_from,
                          evidence=explain(ctx, t))  # fmt: skip


def contrast(ctx, args: dict):
    """IR(a) - IR(b) in each cell both cases have (each cell's CI from the two bootstrap
    half-widths), pooled over the cells."""
    a = cells(ctx, {**args, "cases": [args["a"]]})
    b = cells(ctx, {**args, "cases": [args["b"]]})
    key = ["host", "runtime", "target", "partner", "metric"]
    j = a.merge(b, on=key, suffixes=("_a", "_b"))
    if j.empty:
        return _missing(ctx, {**args, "cases": [args["a"], args["b"]]})
    d = j["ir_a"] - j["ir_b"]
    half = np.hypot((j["ir_ci_high_a"] - j["ir_ci_low_a"]) / 2, (j["ir_ci_high_b"] - j["ir_ci_low_b"]) / 2)
    by_cell = tuple(
        CellEstimate(f"{r['target']} beside {r['partner']} ({r['metric']})", dv, dv - h, dv + h)
        for (_, r), dv, h in zip(j.iterrows(), d, half)
    )  # fmt: skip
    n = int(min(_n(a.merge(j[key], on=key)), _n(b.merge(j[key], on=key))))
    what = f"IR in Case {args['a']} minus IR in Case {args['b']}" + (
        f", random-effects mean over {len(j)} cells" if len(j) > 1 else f" of {by_cell[0].label}"
    )
    return pooled_measure(what, by_cell, n, evidence=explain(ctx, pd.concat([a, b])))


def _group_difference(ctx, t_a: pd.DataFrame, t_b: pd.DataFrame, what: str):
    """The pooled IR of one group of cells minus another's (each a random-effects mean)."""
    p_a, p_b = pool(ir_cells(t_a)), pool(ir_cells(t_b))
    est, low, high = difference(p_a, p_b)
    both = pd.concat([t_a, t_b])
    return Measure(what, est, low, high, _n(both), len(both), evidence=explain(ctx, both))


def same_vs_mixed(ctx, args: dict):
    t = cells(ctx, args)
    same, mixed = t[t["target"] == t["partner"]], t[t["target"] != t["partner"]]
    if len(same) < 2 or len(mixed) < 2:
        return _missing(ctx, args)
    what = f"pooled IR of {len(same)} same-kind cells minus that of {len(mixed)} mixed cells"
    return _group_difference(ctx, same, mixed, what)


def partner_contrast(ctx, args: dict):
    """Pooled IR of the targets beside partners `a` minus beside partners `b`: which partner
    interferes least (above 0: `a` does)."""
    beside_a = cells(ctx, {**args, "partners": args["a"]})
    beside_b = cells(ctx, {**args, "partners": args["b"]})
    if len(beside_a) < 2 or len(beside_b) < 2:
        return _missing(ctx, {**args, "partners": args["a"] + args["b"]})
    what = (f"pooled IR beside {', '.join(args['a'])} ({len(beside_a)} cells) minus beside "
            f"{', '.join(args['b'])} ({len(beside_b)} cells)")  # fmt: skip
    return _group_difference(ctx, beside_a, beside_b, what)


def limit_effect_cells(ctx) -> pd.DataFrame | Skip:
    """Per target and metric, the IR of Case 1u against Case 1 (target, metric, ir, low, high, n)
    with a delta-method CI from the two summaries (no concurrent case is needed)."""
    summ = _num(ctx.table("summary"), "n", "mean", "sd")
    if summ.empty or UNLIMITED not in set(summ["case"]):
        return Skip(NOT_RUN, f"these results have no Case {UNLIMITED} (the unlimited baseline)")
    key = ["host", "runtime", "target", "metric"]
    j = summ[summ["case"] == "1"].merge(summ[summ["case"] == UNLIMITED], on=key, suffixes=("", "_u"))
    rows = []
    for r in j.itertuples(index=False):
        ratio, low, high = ratio_from_summaries(r.mean_u, r.sd_u, r.n_u, r.mean, r.sd, r.n)
        # The IR as everywhere (resampling.relative_change): x/base - 1 if higher is better, else
        # 1 - x/base (a time that grows without limits is a loss).
        if str(r.higher_is_better) == "True":
            ir, low, high = ratio - 1, low - 1, high - 1
        else:
            ir, low, high = 1 - ratio, 1 - high, 1 - low
        rows.append({"target": r.target, "metric": r.metric, "ir": ir, "low": low, "high": high,
                     "n": min(r.n, r.n_u)})  # fmt: skip
    return pd.DataFrame(rows)


def limit_effect(ctx, args: dict):
    """Case 1u against Case 1 where Case 1's limits are the whole host: only then are the
    resources the same with cgroups and without. Each target's metrics pooled, then the targets."""
    ncpu = max((h.get("cores") or 0 for h in ctx.env.get("hosts", {}).values()), default=0)
    limits = (ctx.config or {}).get("limits", {})
    if ncpu and limits.get("cpus") and int(limits["cpus"]) < int(ncpu):
        return Skip(NOT_RUN, f"Case 1 here limits a container to {limits['cpus']} of the host's {ncpu} CPUs, so "
                    "the resources differ with limits and without; needs limits.cpus equal to the host's CPUs and Case 1u")  # fmt: skip
    per_metric = limit_effect_cells(ctx)
    if isinstance(per_metric, Skip):
        return per_metric
    by_cell = []
    for target, g in per_metric.groupby("target", sort=True):
        p = pool(
            [CellEstimate(m, r, lo, hi) for m, r, lo, hi in zip(g["metric"], g["ir"], g["low"], g["high"])]
        )
        by_cell.append(CellEstimate(target, p.estimate, p.low, p.high))
    detail = ", ".join(f"{c.label} {pct(c.estimate)}" for c in by_cell)
    return pooled_measure(f"IR of Case {UNLIMITED} against Case 1, pooled over {len(by_cell)} microservices "
                          f"({detail})", tuple(by_cell), int(per_metric["n"].min()))  # fmt: skip
