"""The evidence from our own data that explains a finding's value or a difference from the
paper: the limit's effect against the partner's (split.tsv), the CPUs each member used and the
host's pressure (contention.tsv), threads (runs.tsv), the page cache, the idle baseline, a
CPU-spinning control partner; and the disagreeing cells counted by cause."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.report.format import pct
from interference.studies.pairs.cases import UNLIMITED_CASES
from interference.studies.pairs.findings.cells import _num, cells

CONTROL = "P"  # the partner that only spins a CPU (config/control.yaml)


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
