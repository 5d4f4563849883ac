"""The scaling study's checks of paper 001's findings (report/published/findings.yaml): a
runtime's time for the sysbench task against bare metal's, one instance each (slowdown.tsv)."""

from __future__ import annotations

import pandas as pd

from interference.findings.verdict import NOT_RUN, NOT_TESTABLE, Measure, Skip, quantity, table_level
from interference.stores.stats_tables import vm_acceleration


@quantity("ratio")
def runtime_ratio(ctx, args: dict):
    rt = args["runtime"]
    t = ctx.table("slowdown")
    if t.empty or rt not in set(t["runtime"]):
        return Skip(NOT_RUN, f"these results have no scaling runs on {rt}")
    if "baremetal" not in set(t["runtime"]):
        return Skip(
            NOT_RUN, "these results have no bare-metal scaling runs (runtime baremetal), the reference"
        )
    if rt == "vm" and (vm_acceleration(ctx.env) or ("",))[0] == "tcg":
        why = vm_acceleration(ctx.env)[1]
        return Skip(NOT_TESTABLE, "the VM ran under TCG, an emulator, not hardware virtualisation"
                    + (f" ({why})" if why else "") + ": its CPU speed says nothing of a hypervisor's")  # fmt: skip
    for c in ("instances", "n", "slowdown", "ci_low", "ci_high"):
        t[c] = pd.to_numeric(t[c], errors="coerce")
    first = t["instances"].min()
    r = t[(t["runtime"] == rt) & (t["instances"] == first)].iloc[0]
    base = t[(t["runtime"] == "baremetal") & (t["instances"] == first)].iloc[0]
    return Measure(f"{rt}'s time for the task over bare metal's, {first:.0f} instance(s)",
                   float(r["slowdown"]), float(r["ci_low"]), float(r["ci_high"]), int(min(r["n"], base["n"])),
                   **table_level(r))  # fmt: skip


CHECKS = {"runtime_ratio": runtime_ratio}
