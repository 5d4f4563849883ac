"""The evidence from our own data beside a finding's value: measured contrasts only, each with its
95 % CI where one exists — the limit's effect against the partner's (split.tsv), the CPUs each
member used and the host's pressure (contention.tsv), threads (run_members.tsv), the targets beside a
CPU-spinning control partner. A gain whose cause these runs do not measure (Bonnie++ without its
memory limit, NR beside anything) is said to be unexplained, naming the config that measures it."""

from __future__ import annotations

import pandas as pd

from interference.findings.pooling import pool
from interference.findings.verdict import CellEstimate
from interference.rendering.kit.format import pct
from interference.studies.pairs.cases import UNLIMITED_CASES
from interference.studies.pairs.findings.cells import _num, cells
from interference.studies.pairs.members import beside_runs
from interference.studies.pairs.selection import Selector

CONTROL = "P"  # the partner that only spins a CPU (config/control.yaml): in no default selection


def _cores(ctx, target: str, case_set) -> float | None:
    c = ctx.table("contention")
    if c.empty or "cpu_cores" not in c:
        return None
    c = _num(c, "cpu_cores")
    v = c[(c["target"] == target) & c["case"].isin(case_set)]["cpu_cores"].dropna()
    return float(v.median()) if len(v) else None


def _threads(ctx, t: pd.DataFrame) -> list[str]:
    """Threads of the multithreaded targets (run_members.tsv) in Case 1 and in these cells' cases."""
    members = ctx.table("run_members")
    out = []
    if members.empty:
        return out
    members = beside_runs(members, ctx.table("runs"), ("case",))
    for target in sorted(set(t["target"])):
        counts = {}
        r = members[(members["microservice"] == target) & (members["threads"].astype(str) != "")]
        for case, g in r.groupby("case"):
            counts.setdefault(case, set()).update(g["threads"].astype(str))
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


def _pooled(t: pd.DataFrame, effect: str) -> str:
    """The random-effects mean of these cells' `effect` IR (split.tsv) with its 95 % CI."""
    est, low, high = f"{effect}_ir", f"{effect}_ci_low", f"{effect}_ci_high"
    rows = t.dropna(subset=[est, low, high]) if low in t else t.iloc[:0]
    if rows.empty:
        return pct(t[est].mean())
    p = pool([CellEstimate("", r[est], r[low], r[high]) for _, r in rows.iterrows()])
    return f"{pct(p.estimate)} [{pct(p.low)}, {pct(p.high)}]"


def explain(ctx, t: pd.DataFrame) -> list[str]:
    """What our own data measure about these cells (see the module's docstring)."""
    out = []
    free = t[t["case"].isin(UNLIMITED_CASES)]
    if len(free) and "limit_ir" in free and free["limit_ir"].notna().any():
        out.append(
            f"in Cases 2/3a the limit's removal alone (Case 1u against 1) gives {_pooled(free, 'limit')} "
            f"and the partner's arrival (against 1u) {_pooled(free, 'partner')} "
            f"({'the cell' if len(free) == 1 else f'random-effects means over {len(free)} cells'})"
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
        out.append(f"Bonnie++ gains up to {pct(b['ir'].max())} without the memory limit: cause not measured in these "
                   "runs (config/bonnie-direct.yaml measures the block tests with O_DIRECT, without the page cache)")  # fmt: skip
    control = cells(ctx, Selector(partners=(CONTROL,), targets=tuple(sorted(set(t["target"])))))
    if len(control):
        p = pool([CellEstimate("", r["ir"], r["ir_ci_low"], r["ir_ci_high"]) for _, r in control.iterrows()])
        out.append(f"beside P, a partner that only spins a CPU, the same targets' IR is {pct(p.estimate)} "
                   f"[{pct(p.low)}, {pct(p.high)}] (random-effects mean of {len(control)} cells)")  # fmt: skip
    elif (t["ir"] > 0.05).any() and CONTROL not in set(t["target"]):
        out.append(f"a gain here has no measured cause: config/control.yaml measures these targets beside {CONTROL}, "
                   "a partner that only spins a CPU (a busy host against a shared resource)")  # fmt: skip
    return out or ["no measured contrast explains these cells"]
