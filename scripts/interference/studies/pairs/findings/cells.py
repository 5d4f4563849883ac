"""The IR cells a finding of the papers is about: interference.tsv's rows (with split.tsv's
columns) that a finding's Selector picks, one per pairing unless it names a metric; and, when
there are none, why (what the config lacks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.findings.verdict import MIN_SAMPLES, NOT_RUN, Skip
from interference.studies.pairs.cases import UNLIMITED, UNLIMITED_CASES
from interference.studies.pairs.selection import Selector
from interference.studies.pairs.statistics import ITERATIONS_LEVEL, RUNS_LEVEL
from interference.studies.pairs.statistics.paired import BLOCKS_PAIRED, RUNS_PAIRED

CELL = ["host", "runtime", "case", "target", "partner", "metric"]
# interference.tsv's ci_level values, the weakest first.
LEVEL_ORDER = ["", ITERATIONS_LEVEL, BLOCKS_PAIRED, RUNS_LEVEL, RUNS_PAIRED]


def weakest(levels) -> str:
    return min((x if isinstance(x, str) else "" for x in levels), key=LEVEL_ORDER.index)


def _num(df: pd.DataFrame, *cols) -> pd.DataFrame:
    for c in cols:
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def cells(ctx, sel: Selector) -> pd.DataFrame:
    """The IR cells a finding is about: interference.tsv rows (with the split's columns) its
    selector picks; `ir` is the partner's effect with effect: partner."""
    t = _num(ctx.table("interference"), "ir", "ir_ci_low", "ir_ci_high", "n", "baseline_n", "ir_se_own",
             "ir_se_baseline", "ci_df", "df_own", "df_baseline")  # fmt: skip
    if t.empty:
        return t
    s = ctx.table("split")
    if not s.empty:
        s = _num(s, *(c for c in s if c.endswith(("_ir", "_ci_low", "_ci_high", "_n"))))
        extra = [c for c in s if c.startswith(("limit_", "partner_")) or c == "unlimited_n"]
        t = t.merge(s[[*CELL, *extra]], on=CELL, how="left")
    t = sel.rows(t)
    if sel.effect == "partner":
        if "partner_ir" not in t or t["partner_ir"].isna().all():
            return t.iloc[:0]
        # The split's interval has the same levels as the IR's (the same variance components), but
        # its SE is not split into own and baseline parts: taken from the CI, cells independent.
        t = t.assign(ir=t["partner_ir"], ir_ci_low=t["partner_ci_low"], ir_ci_high=t["partner_ci_high"],
                     ir_se_own=np.nan, ir_se_baseline=np.nan, df_own=np.nan, df_baseline=np.nan,
                     baseline_n=t.get("unlimited_n", t["baseline_n"]).where(t["case"].isin(UNLIMITED_CASES), t["baseline_n"]))  # fmt: skip
    t = t[t["ir"].notna()]
    return t if sel.metric is not None else _per_pair(t)


def _per_pair(t: pd.DataFrame) -> pd.DataFrame:
    """One cell per host, runtime, case, target and partner: a target's metrics (STREAM's four
    kernels, Bonnie++'s four tests) averaged, so that each pairing weighs the same; and only
    cells with a runs-level interval or MIN_SAMPLES on each side, unless none has them (the
    verdict then says so; verdict.too_few_samples).
    The metrics of one run are correlated by an unknown amount: their standard errors are
    averaged, as if perfectly correlated (the widest their mean's can be), with the fewest
    degrees of freedom and the weakest level of any."""
    if t.empty:
        return t
    key = ["host", "runtime", "case", "target", "partner"]
    numeric = [c for c in t if c not in key and pd.api.types.is_numeric_dtype(t[c])]
    agg = {
        c: ("min" if c.endswith(("_n", "_df")) or c.startswith("df_") or c == "n" else "mean")
        for c in numeric
    }
    if "ci_level" in t:
        agg["ci_level"] = weakest
    if "ir_ci_method" in t:  # one metric's interval keeps its scale (checks.log_sign); an average has none
        agg["ir_ci_method"] = lambda m: m.iloc[0] if len(m) == 1 else ""
    if "higher_is_better" in t:
        agg["higher_is_better"] = "first"
    g = t.groupby(key, sort=True, as_index=False).agg(agg)
    g["metric"] = t.groupby(key, sort=True)["metric"].agg(lambda m: ", ".join(sorted(set(m)))).to_numpy()
    runs_level = g["ci_level"].isin([RUNS_LEVEL, RUNS_PAIRED]) if "ci_level" in g else False
    enough = (np.minimum(g["n"], g["baseline_n"]) >= MIN_SAMPLES) | runs_level  # verdict.too_few_samples
    return g[enough] if enough.any() else g


def _missing(ctx, sel: Selector) -> Skip:
    """Why a selection has no cells: what the config lacks."""
    have = ctx.table("summary")
    lacks = []
    for names in (sel.targets, sel.partners):
        for m in names or ():
            if have.empty or m not in set(have["target"]):
                lacks.append(f"microservice {m}")
    for c in sel.cases or ():
        if have.empty or c not in set(have["case"]):
            lacks.append(f"Case {c}")
    if sel.host is not None and (have.empty or sel.host not in set(have["host"])):
        lacks.append(f"host {sel.host}")
    if sel.effect == "partner" and (have.empty or UNLIMITED not in set(have["case"])):
        lacks.append("Case 1u (the unlimited baseline)")
    if lacks:
        return Skip(NOT_RUN, f"these results have no {', '.join(dict.fromkeys(lacks))}")
    cases = ", ".join(sel.case_list)
    if sel.targets is not None or sel.partners is not None:
        pairs = [f"{t}+{p}" for t in sel.targets or ["any"] for p in sel.partners or ["any"]]
        what = "pair " + " or ".join(pairs)
    else:
        what = {"same": "same-kind pair", "mixed": "pair of different kinds"}.get(sel.pairing, "pair")
    return Skip(NOT_RUN, f"these results have no {what} in Case {cases} (the config's pairs leave it out)")


def _n(t: pd.DataFrame) -> int:
    return int(np.nanmin(np.minimum(t["n"], t["baseline_n"]))) if len(t) else 0


def _label(r) -> str:
    return f"{r['target']} beside {r['partner']} (Case {r['case']}, {r['metric'].replace('_', ' ')})"
