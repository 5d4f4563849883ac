"""Contention telemetry (results/stats/pairs/contention.tsv): how much the host's tasks waited for
CPU, memory and I/O, and how much the members were throttled, in each case, and how a measured
iteration's performance relates to the CPU pressure while it ran."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, num, numi, p_str, pct, plural
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.section.data import CASE_COLOR, CASE_NAME, PairsData
from interference.studies.pairs.statistics.iteration_telemetry import CASE_MEANS, CASE_SUMS, TELEMETRY

SHARES = ["psi_cpu_some", "psi_cpu_full", "psi_memory_some", "psi_io_some", "throttled"]


def pressure_figure(d, targets: list[str]) -> Figure:
    """Per target: each measured iteration's relative performance against the host's CPU pressure."""
    fig = Figure(figsize=(min(3.2 * len(targets), 9.6), 3.3), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(targets), sharey=True))
    for ax, target in zip(axes, targets):
        t = d[d["target"] == target]
        for case, c in t.groupby("case", sort=True):
            ax.scatter(100 * c["psi_cpu_some"], c["relative"], s=12, alpha=0.7, color=CASE_COLOR.get(case),
                       label=CASE_NAME.get(case, case), edgecolors="none")  # fmt: skip
        ax.axhline(1, color="#444444", linewidth=0.6)
        ax.set_title(target, fontsize=9)
        ax.set_xlabel("host CPU pressure, some (% of time)")
        ax.grid(True)
    axes[0].set_ylabel("performance / Case 1 mean")
    axes[-1].legend(fontsize=7, loc="best")
    return fig


class Contention:
    """Pressure, throttling and memory failures per case; performance against CPU pressure."""

    def __init__(self, data: PairsData):
        self.data = data

    def interval_phrase(self) -> str:
        """'every 0.5 s', as the runs recorded their sampler's interval (runs.tsv)."""
        r = self.data.runs
        values = r.get("telemetry_interval_s", [])
        seen = sorted(
            {float(v) for v in pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna()}
        )
        if not seen:
            return "at an interval these runs did not record"
        return "every " + " or ".join(f"{v:g} s" for v in seen)

    def contention_blocks(self) -> list[Block]:
        d = self.data.doc.stats.table("pairs", "contention", ["value", "relative", *TELEMETRY])
        if d.empty or "psi_cpu_some" not in d or d["psi_cpu_some"].isna().all():
            return [md("These runs carry no contention telemetry (`telemetry_interval_s: 0`, or results of a version "
                       "before it); run them again to see pressure and throttling here.")]  # fmt: skip
        blocks = [
            md(f"During every run the runner sampled, {self.interval_phrase()}, the host's pressure stall "
               "information (the share of time some or all runnable tasks waited for CPU, memory or I/O), its "
               "context switches, and each container's CPU throttling and memory-limit failures from its cgroup; "
               "each value below is taken over the measured iteration itself (counters interpolated between "
               "samples).")
        ]  # fmt: skip
        # The means and sums per case are the statistics step's (contention_by_case.tsv).
        per_case = self.data.doc.stats.table(
            "pairs", "contention_by_case", ["n_iterations", *CASE_MEANS, *CASE_SUMS]
        )
        rows = [
            [f"{r['host']} / {r['runtime']}", CASE_NAME.get(r["case"], r["case"]), numi(r["n_iterations"])]
            + [pct(r[c], 1, sign=False) for c in SHARES]
            + [num(r["ctxt_per_s"], 0), num(r["steal_cores"], 3)]
            + [num(r[c], 0) for c in CASE_SUMS]
            for _, r in per_case.iterrows()
        ]
        blocks.append(
            self.data.table(
                [
                    "Host / runtime",
                    "Case",
                    "Iter.",
                    "CPU some",
                    "CPU full",
                    "Mem. some",
                    "I/O some",
                    "Throttled",
                    "Ctx sw./s",
                    "Steal",
                    "Thr. periods",
                    "Mem. failures",
                    "OOM kills",
                ],
                rows,
                "Contention per case: mean shares of each measured iteration's time (CPU, memory, I/O "
                "pressure, some or full: host-wide; throttled: the member's cgroup), context switches per "
                "second (host), the host's steal (CPUs' worth of time the hypervisor ran others on this "
                "machine's CPUs), and the member's throttled CFS periods, memory-limit failures and OOM kills "
                "summed over the iterations; – where no value was taken (results/stats/pairs/contention_by_case.tsv).",
                numeric_from=2,
            )  # fmt: skip
        )
        concurrent = d[d["case"].isin(CONCURRENT) & d["relative"].notna() & d["psi_cpu_some"].notna()]
        targets = list(dict.fromkeys(concurrent["target"]))
        if targets:
            blocks.append(
                self.data.figure(
                    pressure_figure(d[d["relative"].notna()], targets),
                    "Each measured iteration's performance relative to its Case 1 mean (above 1: better) against "
                    "the host's CPU pressure during it, per target microservice and case.",
                    alt="Scatter plots of relative performance against host CPU pressure per microservice",
                )
            )
            corr = self.data.doc.stats.table(
                "pairs", "pressure_correlation", schemas.PRESSURE_CORRELATION.numeric
            )
            sentences = [
                f"{esc(r.target)} ρ = {num(r.rho, 2)} ({p_str(r.p)}, {plural(int(r.n), 'sample')})"
                for r in corr.itertuples(index=False)
                if r.target in targets
            ]
            if sentences:
                blocks.append(
                    md("Spearman's rank correlation of performance with CPU pressure in the concurrent cases "
                       f"(negative: slower when tasks waited more for CPU; results/stats/pairs/"
                       f"pressure_correlation.tsv): {'; '.join(sentences)}.")
                )  # fmt: skip
        return blocks
