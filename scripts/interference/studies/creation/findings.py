"""The creation study's checks of paper 001's findings (report/published/findings.yaml): ratios
of creation times (summary.tsv, metric created_to_exit), with a delta-method CI."""

from __future__ import annotations

import pandas as pd

from interference.findings.inference import ITERATIONS, RUNS
from interference.findings.verdict import NOT_RUN, NOT_TESTABLE, Measure, Skip, quantity, ratio_from_summaries
from interference.stores.stats_tables import vm_acceleration

METRIC = "created_to_exit"


def _rows(ctx) -> pd.DataFrame:
    s = ctx.table("summary")
    if s.empty:
        return s
    for c in ("entities", "children", "n", "mean", "sd"):
        s[c] = pd.to_numeric(s[c], errors="coerce")
    return s[s["metric"] == METRIC]


def _pick(s: pd.DataFrame, want: dict, entities: int = 1, children: int = 1) -> pd.Series | None:
    r = s[(s["runtime"] == want["runtime"]) & (s["entities"] == entities)]
    if "variant" in want:
        r = r[(r["variant"] == want["variant"]) & (r["children"] == children)]
    return r.iloc[0] if len(r) else None


def _ratio(what: str, a: pd.Series, b: pd.Series, level: str = "") -> Measure:
    est, low, high = ratio_from_summaries(a["mean"], a["sd"], a["n"], b["mean"], b["sd"], b["n"])
    return Measure(what, est, low, high, int(min(a["n"], b["n"])), level=level,
                   df=max(min(a["n"], b["n"]) - 1, 1))  # fmt: skip


def _name(want: dict) -> str:
    return want["runtime"] + (f" ({want['variant']} child image)" if "variant" in want else "")


@quantity("ratio")
def creation_ratio(ctx, args: dict):
    s = _rows(ctx)
    a, b = (None, None) if s.empty else (_pick(s, args["a"]), _pick(s, args["b"]))
    if a is None or b is None:
        missing = [_name(w) for w, r in ((args["a"], a), (args["b"], b)) if r is None]
        return Skip(NOT_RUN, f"these results have no creation of one {' or '.join(missing)}")
    if (
        "vm" in (args["a"]["runtime"], args["b"]["runtime"])
        and (vm_acceleration(ctx.env) or ("",))[0] == "tcg"
    ):
        return Skip(NOT_TESTABLE, "the VM ran under TCG, an emulator: its boot time is not a hypervisor's")
    # One entity a run: each creation time is its own run's, so the interval covers runs.
    return _ratio(f"time to create one {_name(args['a'])} over one {_name(args['b'])}", a, b, RUNS)


@quantity("ratio")
def parents_over_children(ctx, args: dict):
    """k parents with one child each over one parent with k children, the largest k both have."""
    s = _rows(ctx)
    s = s[(s["runtime"] == "nested") & (s["variant"] == "load")] if len(s) else s
    have = {(int(r.entities), int(r.children)) for r in s.itertuples()} if len(s) else set()
    ks = sorted(k for k in {e for e, _ in have} if k > 1 and (k, 1) in have and (1, k) in have)
    if not ks:
        return Skip(
            NOT_RUN, "needs nested creation with k parents of one child and one parent of k children (k > 1)"
        )
    k = ks[-1]
    a = s[(s["entities"] == k) & (s["children"] == 1)].iloc[0].copy()
    b = s[(s["entities"] == 1) & (s["children"] == k)].iloc[0].copy()
    # The k entities of one run share it: over runs, each side's n is its runs (the entities' SD
    # over the square root of the runs is the widest a run mean's SE can be).
    runs = [_runs_of(ctx, e, c) for e, c in ((k, 1), (1, k))]
    if not all(runs):
        return _ratio(f"{k} parents × 1 child over 1 parent × {k} children", a, b, ITERATIONS)
    a["n"], b["n"] = runs
    return _ratio(f"{k} parents × 1 child over 1 parent × {k} children (over runs)", a, b, RUNS)


def _runs_of(ctx, entities: int, children: int) -> int:
    """How many runs made nested parents (load variant) with these entities and children (runs.tsv;
    0 where it does not say)."""
    r = ctx.table("runs")
    if r.empty or not {"runtime", "variant", "entities", "children", "repetition"} <= set(r.columns):
        return 0
    r = r[(r["runtime"] == "nested") & (r["variant"] == "load")
          & (pd.to_numeric(r["entities"], errors="coerce") == entities)
          & (pd.to_numeric(r["children"], errors="coerce") == children)]  # fmt: skip
    return int(r["repetition"].nunique())


CHECKS = {"creation_ratio": creation_ratio, "parents_over_children": parents_over_children}
