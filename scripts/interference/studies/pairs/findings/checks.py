"""The pair study's checks of the papers' findings: each gives our value of a claim's quantity
with its 95 % CI (findings.verdict.Measure) and the evidence behind it, or why it cannot (Skip):
mean IR, a contrast of cases or of partners, same-kind against mixed pairs, the best cell, the
share of the paper's directions we agree with, and the limit's own effect (Case 1u against 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.findings.verdict import (
    MIN_SAMPLES,
    NOT_RUN,
    Measure,
    Skip,
    difference_of_groups,
    mean_over_cells,
    quantity,
    ratio_from_summaries,
    share_ci,
)
from interference.report.format import pct
from interference.studies.pairs.cases import UNLIMITED
from interference.studies.pairs.findings.cells import _label, _missing, _n, _num, cells
from interference.studies.pairs.findings.evidence import causes, explain
from interference.studies.pairs.findings.paper_values import _published_mean
from interference.studies.pairs.statistics.published import KEY


def mean_ir(ctx, args: dict):
    t = cells(ctx, args)
    if t.empty:
        return _missing(ctx, args)
    est, low, high = mean_over_cells(t["ir"], t["ir_ci_low"].to_numpy(), t["ir_ci_high"].to_numpy())
    what = "IR of " + _label(t.iloc[0]) if len(t) == 1 else f"mean IR over {len(t)} pairings and cases"
    pub, pub_from = _published_mean(ctx, args)
    return Measure(what, est, low, high, _n(t), len(t), pub, pub_from, explain(ctx, t))


def contrast(ctx, args: dict):
    """Mean over the cells both cases have of IR(a) - IR(b)."""
    a = cells(ctx, {**args, "cases": [args["a"]]})
    b = cells(ctx, {**args, "cases": [args["b"]]})
    key = ["host", "runtime", "target", "partner", "metric"]
    j = a.merge(b, on=key, suffixes=("_a", "_b"))
    if j.empty:
        return _missing(ctx, {**args, "cases": [args["a"], args["b"]]})
    d = (j["ir_a"] - j["ir_b"]).to_numpy()
    if len(j) == 1:  # one cell: the two bootstrap half-widths combined
        half = np.hypot(
            (j["ir_ci_high_a"] - j["ir_ci_low_a"]) / 2, (j["ir_ci_high_b"] - j["ir_ci_low_b"]) / 2
        )
        est, low, high = float(d[0]), float(d[0] - half.iloc[0]), float(d[0] + half.iloc[0])
    else:
        est, low, high = mean_over_cells(d, [np.nan], [np.nan])
    n = int(min(_n(a.merge(j[key], on=key)), _n(b.merge(j[key], on=key))))
    what = f"IR in Case {args['a']} minus IR in Case {args['b']}, mean over {len(j)} cell{'s' if len(j) > 1 else ''}"
    return Measure(what, est, low, high, n, len(j), evidence=explain(ctx, pd.concat([a, b])))


def same_vs_mixed(ctx, args: dict):
    t = cells(ctx, args)
    same, mixed = t[t["target"] == t["partner"]], t[t["target"] != t["partner"]]
    if len(same) < 2 or len(mixed) < 2:
        return _missing(ctx, args)
    est, low, high = difference_of_groups(same["ir"], mixed["ir"])
    what = f"mean IR of {len(same)} same-kind cells minus that of {len(mixed)} mixed cells"
    return Measure(what, est, low, high, _n(t), len(t), evidence=explain(ctx, t))


def best_cell(ctx, args: dict):
    t = cells(ctx, args)
    if t.empty:
        return _missing(ctx, args)
    r = t.loc[t["ir"].idxmax()]
    return Measure(f"best cell: IR of {_label(r)}", float(r["ir"]), float(r["ir_ci_low"]), float(r["ir_ci_high"]),
                   int(min(r["n"], r["baseline_n"])), evidence=explain(ctx, t.loc[[t["ir"].idxmax()]]))  # fmt: skip


@quantity("share")
def direction_agreement(ctx, args: dict):
    """The share of the paper's IRs of at least 5 % whose direction ours has (|IR| >= 2 % with the
    same sign: published.py's rule), over cells with enough samples."""
    p = ctx.table("published")
    if p.empty:
        return Skip(NOT_RUN, "no cell of these results matches one the paper published")
    p = _num(p[(p["comparison"] == "ir") & (p["paper"] == args["paper"])].copy(), "paper_ir", "ir")
    p = p[p["paper_ir"].abs() >= 0.05]
    ours = cells(ctx, {"effect": args.get("effect", "total"), "metric": "each"})
    j = p[KEY + ["paper_ir"]].merge(ours, on=KEY)
    j = j[np.minimum(j["n"], j["baseline_n"]) >= MIN_SAMPLES]
    if j.empty:
        if args.get("effect") == "partner" and ours.empty:
            return _missing(ctx, {"effect": "partner"})
        return Skip(
            NOT_RUN,
            f"no cell with {MIN_SAMPLES} samples matches one of paper {args['paper']}'s of at least 5 %",
        )
    agree = (np.sign(j["paper_ir"]) == np.sign(j["ir"])) & (j["ir"].abs() >= 0.02)
    est, low, high = share_ci(int(agree.sum()), len(j))
    what = f"{int(agree.sum())} of {len(j)} cells in the paper's direction"
    return Measure(what, est, low, high, MIN_SAMPLES, 1, evidence=causes(ctx, j[~agree]))


def partner_contrast(ctx, args: dict):
    """Mean IR of the targets beside partners `a` minus beside partners `b` (Welch): which partner
    interferes least (above 0: `a` does)."""
    beside_a = cells(ctx, {**args, "partners": args["a"]})
    beside_b = cells(ctx, {**args, "partners": args["b"]})
    if len(beside_a) < 2 or len(beside_b) < 2:
        return _missing(ctx, {**args, "partners": args["a"] + args["b"]})
    est, low, high = difference_of_groups(beside_a["ir"], beside_b["ir"])
    what = (f"mean IR beside {', '.join(args['a'])} ({len(beside_a)} cells) minus beside "
            f"{', '.join(args['b'])} ({len(beside_b)} cells)")  # fmt: skip
    both = pd.concat([beside_a, beside_b])
    return Measure(what, est, low, high, _n(both), len(both), evidence=explain(ctx, both))


def limit_effect(ctx, args: dict):
    """Case 1u against Case 1 where Case 1's limits are the whole host: only then are the
    resources the same with cgroups and without."""
    ncpu = max((h.get("cores") or 0 for h in ctx.env.get("hosts", {}).values()), default=0)
    limits = (ctx.config or {}).get("limits", {})
    if ncpu and limits.get("cpus") and int(limits["cpus"]) < int(ncpu):
        return Skip(NOT_RUN, f"Case 1 here limits a container to {limits['cpus']} of the host's {ncpu} CPUs, so "
                    "the resources differ with limits and without; needs limits.cpus equal to the host's CPUs and Case 1u")  # fmt: skip
    # From the summary (Cases 1 and 1u need no concurrent case): each target's metrics as IRs of
    # 1u against 1, a delta-method CI from the two means, then averaged per target.
    summ = _num(ctx.table("summary"), "n", "mean", "sd")
    if summ.empty or UNLIMITED not in set(summ["case"]):
        return Skip(NOT_RUN, f"these results have no Case {UNLIMITED} (the unlimited baseline)")
    key = ["host", "runtime", "target", "metric"]
    j = summ[summ["case"] == "1"].merge(summ[summ["case"] == UNLIMITED], on=key, suffixes=("", "_u"))
    rows = []
    for r in j.itertuples(index=False):
        ratio, low, high = ratio_from_summaries(r.mean_u, r.sd_u, r.n_u, r.mean, r.sd, r.n)
        if str(r.higher_is_better) != "True":  # lower is better: the IR of a time is base/x - 1
            ratio, low, high = 1 / ratio, 1 / high, 1 / low
        rows.append(
            {"target": r.target, "ir": ratio - 1, "low": low - 1, "high": high - 1, "n": min(r.n, r.n_u)}
        )
    per = pd.DataFrame(rows).groupby("target").mean()
    est, low, high = mean_over_cells(per["ir"], per["low"].to_numpy(), per["high"].to_numpy())
    detail = ", ".join(f"{t} {pct(r.ir)}" for t, r in per.iterrows())
    return Measure(f"mean IR of Case {UNLIMITED} against Case 1 over {len(per)} microservices ({detail})",
                   est, low, high, int(per["n"].min()), len(per))  # fmt: skip
