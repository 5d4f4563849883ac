"""The pair study's checks of the papers' findings (report/published/findings.yaml): each reads
the statistics tables (interference, split, contention, published) and gives our value of the
claim's quantity with its 95 % CI (findings.verdict.Measure), or why it cannot (Skip), with the
evidence from our own data that explains a difference: the limit's effect against the
partner's (split.tsv), the CPUs each member used (contention.tsv), the page cache, the idle
baseline, a CPU-spinning control partner."""

from __future__ import annotations

import functools
from pathlib import Path

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
from interference.studies.pairs.cases import CONCURRENT_CASES, UNLIMITED, UNLIMITED_CASES
from interference.studies.pairs.statistics.published import KEY, published_ir, read_published

CELL = ["host", "runtime", "case", "target", "partner", "metric"]
CONTROL = "P"  # the partner that only spins a CPU (config/control.yaml)


def _num(df: pd.DataFrame, *cols) -> pd.DataFrame:
    for c in cols:
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def cells(ctx, args: dict) -> pd.DataFrame:
    """The IR cells a finding is about: interference.tsv rows (with the split's columns) filtered by
    args cases, targets, partners, pairing (mixed / same) and host; `ir` is the partner's effect
    with effect: partner."""
    t = _num(ctx.table("interference"), "ir", "ir_ci_low", "ir_ci_high", "n", "baseline_n")
    if t.empty:
        return t
    s = ctx.table("split")
    if not s.empty:
        s = _num(s, *(c for c in s if c.endswith(("_ir", "_ci_low", "_ci_high", "_n"))))
        extra = [c for c in s if c.startswith(("limit_", "partner_")) or c == "unlimited_n"]
        t = t.merge(s[[*CELL, *extra]], on=CELL, how="left")
    t = _select(t, args)
    if args.get("effect") == "partner":
        if "partner_ir" not in t or t["partner_ir"].isna().all():
            return t.iloc[:0]
        t = t.assign(ir=t["partner_ir"], ir_ci_low=t["partner_ci_low"], ir_ci_high=t["partner_ci_high"],
                     baseline_n=t.get("unlimited_n", t["baseline_n"]).where(t["case"].isin(UNLIMITED_CASES), t["baseline_n"]))  # fmt: skip
    t = t[t["ir"].notna()]
    return t if "metric" in args else _per_pair(t)


def _select(df: pd.DataFrame, args: dict) -> pd.DataFrame:
    """The rows of an IR table (ours or the paper's) a finding's args pick: cases, targets,
    partners, pairing (mixed / same) and host."""
    df = df[df["case"].isin(args.get("cases", CONCURRENT_CASES))]
    for key, column in (("targets", "target"), ("partners", "partner")):
        if key in args:
            df = df[df[column].isin(args[key])]
    if args.get("pairing") == "mixed":
        df = df[df["target"] != df["partner"]]
    elif args.get("pairing") == "same":
        df = df[df["target"] == df["partner"]]
    if "host" in args and "host" in df:
        df = df[df["host"] == args["host"]]
    return df


def _per_pair(t: pd.DataFrame) -> pd.DataFrame:
    """One cell per host, runtime, case, target and partner: a target's metrics (STREAM's four
    kernels, Bonnie++'s four tests) averaged, so that each pairing weighs the same; and only
    cells with MIN_SAMPLES on each side, unless none has them (the verdict then says so)."""
    if t.empty:
        return t
    key = ["host", "runtime", "case", "target", "partner"]
    numeric = [c for c in t if c not in key and pd.api.types.is_numeric_dtype(t[c])]
    agg = {c: ("min" if c.endswith("_n") or c in ("n",) else "mean") for c in numeric}
    g = t.groupby(key, sort=True, as_index=False).agg(agg)
    g["metric"] = t.groupby(key, sort=True)["metric"].agg(lambda m: ", ".join(sorted(set(m)))).to_numpy()
    enough = np.minimum(g["n"], g["baseline_n"]) >= MIN_SAMPLES
    return g[enough] if enough.any() else g


def _missing(ctx, args: dict) -> Skip:
    """Why a finding has no cells: what the config lacks."""
    have = ctx.table("summary")
    lacks = []
    for key, what in (("targets", "microservice"), ("partners", "microservice")):
        for m in args.get(key, []):
            if have.empty or m not in set(have["target"]):
                lacks.append(f"{what} {m}")
    for c in args.get("cases", []):
        if have.empty or c not in set(have["case"]):
            lacks.append(f"Case {c}")
    if "host" in args and (have.empty or args["host"] not in set(have["host"])):
        lacks.append(f"host {args['host']}")
    if args.get("effect") == "partner" and (have.empty or UNLIMITED not in set(have["case"])):
        lacks.append("Case 1u (the unlimited baseline)")
    if lacks:
        return Skip(NOT_RUN, f"these results have no {', '.join(dict.fromkeys(lacks))}")
    cases = ", ".join(args.get("cases", CONCURRENT_CASES))
    if "targets" in args or "partners" in args:
        pairs = [f"{t}+{p}" for t in args.get("targets", ["any"]) for p in args.get("partners", ["any"])]
        what = "pair " + " or ".join(pairs)
    else:
        what = {"same": "same-kind pair", "mixed": "pair of different kinds"}.get(args.get("pairing"), "pair")
    return Skip(NOT_RUN, f"these results have no {what} in Case {cases} (the config's pairs leave it out)")


def _n(t: pd.DataFrame) -> int:
    return int(np.nanmin(np.minimum(t["n"], t["baseline_n"]))) if len(t) else 0


def _label(r) -> str:
    return f"{r['target']} beside {r['partner']} (Case {r['case']}, {r['metric'].replace('_', ' ')})"


@functools.cache
def _papers_irs(published_dir: Path) -> pd.DataFrame:
    """Every paper's IRs (printed, computed from its means, or stated), read once per folder."""
    return published_ir(*(read_published(published_dir, n) for n in ("interference_ratios", "means")))


def _published_mean(ctx, args: dict) -> tuple[float | None, str]:
    """The paper's own value of the same mean (its printed, computed or stated IRs)."""
    paper = args.get("paper")
    if not paper:
        return None, ""
    p = _papers_irs(Path(ctx.published_dir))
    p = _select(p[p["paper"] == paper], args)
    if p.empty:
        return None, ""
    # As ours: a target's metrics averaged per pairing and case first.
    per_pair = p.groupby(["case", "target", "partner"])["ir"].mean()
    n = len(per_pair)
    return float(
        per_pair.mean()
    ), f"mean of the paper's {n} pairing{'s' if n > 1 else ''} and cases" if n > 1 else "the paper's IR"


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


# ---------------------------------------------------------------------------------------------
# Evidence


def _cores(ctx, target: str, case_set) -> float | None:
    c = ctx.table("contention")
    if c.empty or "cpu_cores" not in c:
        return None
    c = _num(c, "cpu_cores")
    v = c[(c["target"] == target) & c["case"].isin(case_set)]["cpu_cores"].dropna()
    return float(v.median()) if len(v) else None


def _threads(ctx, t: pd.DataFrame) -> list[str]:
    """Threads of the multithreaded targets (runs.tsv) in Case 1 and in these cells' cases."""
    runs = ctx.table("runs")
    out = []
    if runs.empty:
        return out
    for target in sorted(set(t["target"])):
        counts = {}
        for k in (1, 2):
            col = f"member{k}_threads"
            if col not in runs:
                continue
            r = runs[(runs[f"member{k}"] == target) & (runs[col].astype(str) != "")]
            for case, g in r.groupby("case"):
                counts.setdefault(case, set()).update(g[col].astype(str))
        alone = counts.get("1", set())
        here = set().union(*(counts.get(c, set()) for c in set(t["case"])))
        if alone and here and here != alone:
            out.append(f"{target} ran {'/'.join(sorted(alone))} thread(s) in Case 1 and {'/'.join(sorted(here))} in "
                       "these cases (its threads follow the container's CPUs; config threads: case1 fixes them)")  # fmt: skip
    return out


def _pressure(ctx, t: pd.DataFrame) -> list[str]:
    """The host's CPU pressure and steal over these cells' iterations against Case 1's."""
    c = ctx.table("contention")
    if c.empty or "psi_cpu_some" not in c:
        return []
    c = _num(c, "psi_cpu_some", "steal_cores")
    targets = set(t["target"])
    alone = c[(c["case"] == "1") & c["target"].isin(targets)]
    here = c[c["case"].isin(set(t["case"])) & c["target"].isin(targets)]
    a, h = alone["psi_cpu_some"].median(), here["psi_cpu_some"].median()
    out = []
    if pd.notna(a) and pd.notna(h) and h - a >= 0.05:
        out.append(f"the host's CPU pressure (PSI some) was {pct(h, 0, sign=False)} of the time in these cells against "
                   f"{pct(a, 0, sign=False)} in Case 1 (medians)")  # fmt: skip
    steal = here["steal_cores"].median()
    if pd.notna(steal) and steal >= 0.05:
        out.append(f"the hypervisor took {steal:.2f} CPUs' worth (steal, median) during these cells")
    return out


def explain(ctx, t: pd.DataFrame) -> list[str]:
    """What our own data say about these cells: the limit's effect against the partner's, the
    CPUs used, Bonnie++'s page cache, NR's idle baseline, the CPU-spinning control partner."""
    out = []
    free = t[t["case"].isin(UNLIMITED_CASES)]
    if len(free) and "limit_ir" in free and free["limit_ir"].notna().any():
        out.append(
            f"in Cases 2/3a the limit's removal alone (Case 1u against 1) gives {pct(free['limit_ir'].mean())} "
            f"and the partner's arrival (against 1u) {pct(free['partner_ir'].mean())} "
            f"({'the cell' if len(free) == 1 else f'means over {len(free)} cells'})"
        )
    for target in sorted(set(t["target"])):
        alone, together = _cores(ctx, target, ["1"]), _cores(ctx, target, sorted(set(t["case"])))
        if alone is not None and together is not None and abs(together - alone) >= 0.2:
            out.append(
                f"{target} used {alone:.2f} CPUs alone and limited (Case 1), {together:.2f} in these cells (median)"
            )
    out += _threads(ctx, t) + _pressure(ctx, t)
    b = t[(t["target"] == "B") & t["case"].isin(UNLIMITED_CASES)]
    if len(b) and (b["ir"] > 0.05).any():
        out.append(f"Bonnie++ gains {pct(b['ir'].max())} without the memory limit: the page cache then holds "
                   "part of its data set (its rule sizes the set to twice the limited memory)")  # fmt: skip
    nr3b = _num(ctx.table("interference"), "ir")
    nr3b = nr3b[(nr3b["target"] == "NR") & (nr3b["case"] == "3b")] if len(nr3b) else nr3b
    if "NR" in set(t["target"]) and len(nr3b) and (nr3b["ir"] > 0.05).all():
        out.append(f"NR gains in Case 3b too ({pct(nr3b['ir'].mean())}), where each container has Case 1's "
                   "limits: its baseline alone is slow (an idle host answers later), not its partners")  # fmt: skip
    control = cells(ctx, {"partners": [CONTROL], "targets": sorted(set(t["target"]))})
    if len(control):
        out.append(f"beside P, a partner that only spins a CPU, the same targets' IR is {pct(control['ir'].mean())} "
                   "(a gain there is the busy host, not a shared resource)")  # fmt: skip
    elif (t["ir"] > 0.05).any() and CONTROL not in set(t["target"]):
        out.append(f"config/control.yaml measures these targets beside {CONTROL}, a partner that only spins a CPU: "
                   "how much of a gain is the busy host rather than the partner")  # fmt: skip
    return out or ["unexplained by the recorded telemetry"]


def causes(ctx, disagree: pd.DataFrame) -> list[str]:
    """The disagreeing cells by cause, each cell counted once, in this order."""
    if disagree.empty:
        return []
    left = disagree.copy()
    counts = []

    def take(mask, why):
        nonlocal left
        if mask.any():
            counts.append(f"{int(mask.sum())} {why}")
            left = left[~mask]

    if "partner_ir" in left:
        agrees_alone = np.sign(left["partner_ir"]) == np.sign(left["paper_ir"])
        take(
            left["case"].isin(UNLIMITED_CASES) & agrees_alone & (left["partner_ir"].abs() >= 0.02),
            "in the paper's direction once the limit's removal is split off (partner's effect against Case 1u)",
        )
    take(
        (left["target"] == "B") & left["case"].isin(UNLIMITED_CASES) & (left["ir"] > 0),
        "Bonnie++ gains from the page cache without the memory limit",
    )
    take((left["target"] == "NR") & (left["ir"] > 0), "NR gains beside any partner (its idle baseline)")
    take(left["ir"].abs() < 0.02, "negligible here (|IR| < 2 %)")
    if len(left):
        counts.append(f"{len(left)} unexplained")
    return ["disagreeing cells: " + "; ".join(counts)]


CHECKS = {
    "mean_ir": mean_ir,
    "contrast": contrast,
    "same_vs_mixed": same_vs_mixed,
    "best_cell": best_cell,
    "direction_agreement": direction_agreement,
    "partner_contrast": partner_contrast,
    "limit_effect": limit_effect,
}
