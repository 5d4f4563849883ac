"""The pair study's checks of the papers' findings: each gives our value of a claim's quantity
with its 95 % CI (findings.verdict.Measure) and the evidence behind it, or why it cannot (Skip):
mean IR, a contrast of cases or of partners, same-kind against mixed pairs, the best cell, the
share of the paper's directions we agree with, and the limit's own effect (Case 1u against 1)."""

from __future__ import annotations

import math

import pandas as pd

from interference.findings.inference import ITERATIONS, RUNS, correlated_mean, difference, linear, mean_of
from interference.findings.pooling import pool
from interference.findings.verdict import (
    NOT_RUN,
    CellEstimate,
    Measure,
    Skip,
    ratio_from_summaries,
)
from interference.rendering.kit.format import pct
from interference.studies.pairs.cases import UNLIMITED
from interference.studies.pairs.check_registry import cases_a_and_b, measures, one, partners_a_and_b
from interference.studies.pairs.findings.cells import _label, _missing, _n, _num, cells
from interference.studies.pairs.findings.evidence import explain
from interference.studies.pairs.findings.paper_values import _published_mean
from interference.studies.pairs.statistics import ITERATIONS_LEVEL, RUNS_LEVEL
from interference.studies.pairs.statistics.paired import BLOCKS_PAIRED, RUNS_PAIRED

# The paired design's blocks lie inside one run: they cover no variation between runs.
LEVELS = {RUNS_LEVEL: RUNS, RUNS_PAIRED: RUNS, ITERATIONS_LEVEL: ITERATIONS, BLOCKS_PAIRED: ITERATIONS}
# interference.tsv's t intervals, made on log(ratio) (variance_components.ratio_ci, paired.py).
LOG_T_METHODS = ("variance_components_t", "paired_t")


def log_sign(r) -> int:
    """The row's inference.CellEstimate.log_sign: its IR's interval a t interval on log(ratio)
    (+1 where higher is better, IR = ratio - 1; -1 where lower is, IR = 1 - ratio); 0 for a
    bootstrap's or an average of rows' (cells._per_pair drops the method)."""
    method = r.get("ir_ci_method")
    if not (isinstance(method, str) and method.startswith(LOG_T_METHODS)):
        return 0
    higher = str(r.get("higher_is_better")).strip().lower()  # a bool, its text, or 1.0/0.0
    return 1 if higher in ("true", "1", "1.0") else -1 if higher in ("false", "0", "0.0") else 0


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def ir_cell(r, label: str | None = None) -> CellEstimate:
    """One row of interference.tsv (or of cells()) as a CellEstimate: its SE in the concurrent
    side's own part and the baseline's, which every cell of the same host, runtime, target and
    metric shares (inference's covariance); without them, the SE from its CI."""
    source = ("baseline", r["host"], r["runtime"], r["target"], r["metric"])
    own, base = r.get("ir_se_own", math.nan), r.get("ir_se_baseline", math.nan)
    df, df_own, df_base = (r.get(c, math.nan) for c in ("ci_df", "df_own", "df_baseline"))
    df = df if _finite(df) else math.inf
    level = LEVELS.get(r.get("ci_level"), "")
    if _finite(own) and _finite(base):
        se, shared = math.hypot(own, base), ((source, base, df_base if _finite(df_base) else df),)
    else:
        se, shared = math.nan, ()
    return CellEstimate(label or _label(r), r["ir"], r["ir_ci_low"], r["ir_ci_high"], se, df, level, shared,
                        ("own", *source[1:]), df_own if _finite(df_own) else math.nan, log_sign(r))  # fmt: skip


def ir_cells(t: pd.DataFrame) -> tuple[CellEstimate, ...]:
    """Each IR cell of interference.tsv's rows as a CellEstimate."""
    return tuple(ir_cell(r) for _, r in t.iterrows())


def measure_over(
    what: str, combined: CellEstimate, by_cell: tuple[CellEstimate, ...], n: int, **kw
) -> Measure:
    """A measure that is a combination of cells, shown beside its cells and their
    heterogeneity (findings.pooling)."""
    return Measure.of(combined, what, n, cells=len(by_cell), by_cell=by_cell,
                      pooled=pool(by_cell) if len(by_cell) > 1 else None, **kw)  # fmt: skip


@measures("mean_ir")
def mean_ir(ctx, args: dict):
    (sel,) = one(args)
    t = cells(ctx, sel)
    if t.empty:
        return _missing(ctx, sel)
    what = "IR of " + _label(t.iloc[0]) if len(t) == 1 else f"mean IR over {len(t)} pairings and cases"
    by_cell = ir_cells(t)
    pub, pub_from = _published_mean(ctx, args)
    return measure_over(what, mean_of(by_cell), by_cell, _n(t), published=pub, published_from=pub_from,
                        evidence=explain(ctx, t))  # fmt: skip


@measures("contrast")
def contrast(ctx, args: dict):
    """IR(a) - IR(b) in each cell both cases have (the baseline they share cancels), and the
    mean of those differences."""
    sel_a, sel_b = cases_a_and_b(args)
    a, b = cells(ctx, sel_a), cells(ctx, sel_b)
    key = ["host", "runtime", "target", "partner", "metric"]
    j = a.merge(b[key], on=key)
    if j.empty:
        return _missing(ctx, sel_a.but(cases=[args["a"], args["b"]]))
    a, b = a.merge(j[key], on=key), b.merge(j[key], on=key)
    a_cells, b_cells = ir_cells(a), ir_cells(b)
    by_cell = tuple(
        linear([x, y], [1, -1], f"{r['target']} beside {r['partner']} ({r['metric']})")
        for (_, r), x, y in zip(a.iterrows(), a_cells, b_cells)
    )
    n = int(min(_n(a), _n(b)))
    what = f"IR in Case {args['a']} minus IR in Case {args['b']}" + (
        f", mean over {len(j)} cells" if len(j) > 1 else f" of {by_cell[0].label}"
    )
    return measure_over(
        what, difference(a_cells, b_cells), by_cell, n, evidence=explain(ctx, pd.concat([a, b]))
    )


def _group_difference(ctx, t_a: pd.DataFrame, t_b: pd.DataFrame, what: str):
    """The mean IR of one group of cells minus another's (cells of one target share its
    baseline, which cancels), and the same difference per target where both groups have it
    (the cells an "every" claim is read over)."""
    by_target = []
    for target in sorted(set(t_a["target"]) & set(t_b["target"])):
        ca, cb = ir_cells(t_a[t_a["target"] == target]), ir_cells(t_b[t_b["target"] == target])
        by_target.append(difference(ca, cb, f"{target}: {len(ca)} cell(s) minus {len(cb)}"))
    both = pd.concat([t_a, t_b])
    combined = difference(ir_cells(t_a), ir_cells(t_b))
    return measure_over(
        what, combined, tuple(by_target) or (combined,), _n(both), evidence=explain(ctx, both)
    )


@measures("same_vs_mixed")
def same_vs_mixed(ctx, args: dict):
    (sel,) = one(args)
    t = cells(ctx, sel)
    same, mixed = t[t["target"] == t["partner"]], t[t["target"] != t["partner"]]
    if len(same) < 2 or len(mixed) < 2:
        return _missing(ctx, sel)
    what = f"mean IR of {len(same)} same-kind cells minus that of {len(mixed)} mixed cells"
    return _group_difference(ctx, same, mixed, what)


@measures("partner_contrast")
def partner_contrast(ctx, args: dict):
    """Mean IR of the targets beside partners `a` minus beside partners `b`: which partner
    interferes least (above 0: `a` does)."""
    sel_a, sel_b = partners_a_and_b(args)
    beside_a, beside_b = cells(ctx, sel_a), cells(ctx, sel_b)
    if len(beside_a) < 2 or len(beside_b) < 2:
        return _missing(ctx, sel_a.but(partners=[*args["a"], *args["b"]]))
    what = (f"mean IR beside {', '.join(args['a'])} ({len(beside_a)} cells) minus beside "
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


def limit_effect_split(ctx) -> list[CellEstimate]:
    """Per host, runtime, target and metric, split.tsv's limit effect (Case 1u against Case 1,
    the same on every concurrent row of the target), at the level of the IR's interval (the
    same variance components)."""
    s = ctx.table("split")
    if s.empty or "limit_ir" not in s:
        return []
    s = _num(s, "limit_ir", "limit_ci_low", "limit_ci_high", "baseline_n", "unlimited_n")
    s = s.dropna(subset=["limit_ir", "limit_ci_low", "limit_ci_high"])
    ir = _num(ctx.table("interference"), "ci_df")
    key = ["host", "runtime", "target", "metric"]
    if not ir.empty:
        s = s.merge(ir.drop_duplicates(key)[[*key, "ci_level", "ci_df"]], on=key, how="left")
    out = []
    for _, r in s.drop_duplicates(key).iterrows():
        df = r.get("ci_df", math.nan)
        out.append(CellEstimate(r["metric"], r["limit_ir"], r["limit_ci_low"], r["limit_ci_high"],
                                df=df if _finite(df) else math.inf, level=LEVELS.get(r.get("ci_level"), ""),
                                group=(r["host"], r["runtime"], r["target"])))  # fmt: skip
    return out


@measures("limit_effect")
def limit_effect(ctx, args: dict):
    """Case 1u against Case 1 where Case 1's limits are the whole host: only then are the
    resources the same with cgroups and without. Each target's metrics averaged (perfectly
    correlated), then the mean over the targets. From split.tsv (runs and iterations) where the
    config has a concurrent case; else from the summaries, iterations only (no verdict)."""
    ncpu = max((h.get("cores") or 0 for h in ctx.env.get("hosts", {}).values()), default=0)
    limits = (ctx.config or {}).get("limits", {})
    if ncpu and limits.get("cpus") and int(limits["cpus"]) < int(ncpu):
        return Skip(NOT_RUN, f"Case 1 here limits a container to {limits['cpus']} of the host's {ncpu} CPUs, so "
                    "the resources differ with limits and without; needs limits.cpus equal to the host's CPUs and Case 1u")  # fmt: skip
    per_metric = limit_effect_cells(ctx)
    if isinstance(per_metric, Skip):
        return per_metric
    from_split = {(c.group[2], c.label): c for c in limit_effect_split(ctx)}
    by_cell = []
    for target, g in per_metric.groupby("target", sort=True):
        metrics = [
            from_split.get((target, m)) or CellEstimate(m, r, lo, hi, df=max(1, n - 1), level=ITERATIONS)
            for m, r, lo, hi, n in zip(g["metric"], g["ir"], g["low"], g["high"], g["n"])
        ]
        by_cell.append(correlated_mean(metrics, target, "metrics"))
    detail = ", ".join(f"{c.label} {pct(c.estimate)}" for c in by_cell)
    return measure_over(f"IR of Case {UNLIMITED} against Case 1, mean over {len(by_cell)} microservices "
                        f"({detail})", mean_of(by_cell), tuple(by_cell), int(per_metric["n"].min()))  # fmt: skip
