"""The scaling study's report section: its method, the slowdown figure and table, and what the
runs recorded about the `vm` runtime's emulation. Paper 001's CPU findings are judged once, by
the findings step (findings.section.study_blocks shows them)."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures.scaling import Series, scaling_figure
from interference.rendering.kit.format import esc, interval_level, is_num, num, numi, recorded
from interference.stores.stats_tables import vm_acceleration


class Scaling:
    def __init__(self, doc):
        self.doc = doc
        self.cfg = doc.study_config("scaling")
        self.slowdown = doc.stats.table("scaling", "slowdown", numeric="auto")
        self.summary = doc.stats.table("scaling", "summary", numeric="auto")
        self.runs = doc.stats.table("scaling", "runs", numeric=("instances", "n_iterations", "repetition"))

    def cores(self) -> int | None:
        hosts = self.doc.env.get("hosts", {})
        cores = [h.get("cores") for h in hosts.values() if h.get("cores")]
        return int(cores[0]) if cores else None

    def ran(self) -> tuple[str, str]:
        """The N that ran and each instance's recorded iterations per run (runs.tsv: instances,
        n_iterations), not the config's; '–' and '' when no run was recorded."""
        r = self.runs
        if r.empty or "instances" not in r:
            return "–", ""
        n = pd.to_numeric(r["instances"], errors="coerce")
        each = pd.to_numeric(r.get("n_iterations"), errors="coerce") / n
        return ", ".join(numi(x) for x in sorted(n.dropna().unique())), recorded(each)

    def method(self) -> list[Block]:
        # The workload (primes, events) is the config's: runs.tsv does not record it.
        c = self.cfg
        instances, each = self.ran()
        return [
            md(
                f"Paper 001's Experiment 1: N concurrent instances of sysbench's CPU test (primes up to "
                f"{num(c.get('max_prime'), 0)}, {num(c.get('events'), 0)} events, one thread), one instance per "
                f"entity — a container, an LXC container, a nested child, a VM or a bare-metal process — with "
                f"no limits, N in {esc(instances)}, each instance run "
                f"{each or 'an unrecorded number of'} times per run (results/stats/scaling/runs.tsv). The slowdown is an instance's mean "
                "execution time over that of one instance on the reference runtime (bare metal where it ran), "
                f"with a 95 % interval {interval_level(self.slowdown)}; the paper plots the same ratio (its Fig. 3, 12 cores, N up to 64)."
            )
        ]

    def figure(self) -> list[Block]:
        series = []
        for rt, d in self.slowdown.groupby("runtime", sort=False):
            d = d.sort_values("instances")
            series.append(
                Series(
                    rt,
                    [int(n) for n in d["instances"]],
                    list(d["slowdown"]),
                    [lo if is_num(lo) else v for lo, v in zip(d["ci_low"], d["slowdown"])],
                    [hi if is_num(hi) else v for hi, v in zip(d["ci_high"], d["slowdown"])],
                )
            )
        if not series:
            return [md("No scaling results.")]
        ref = self.slowdown["reference"].iloc[0]
        fig = scaling_figure(series, self.cores(), f"slowdown (vs. one instance, {ref})")
        return [
            self.doc.figure(
                fig,
                f"Slowdown of a sysbench instance with N concurrent instances, relative to one instance on "
                f"{esc(ref)} (95 % CI whiskers {interval_level(self.slowdown)}); the dashed line is this machine's core count.",
                "Line chart of slowdown against the number of concurrent instances, one line per runtime.",
            )
        ]

    def table(self) -> list[Block]:
        rows = []
        for r in self.slowdown.itertuples(index=False):
            ci = f" [{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]" if is_num(r.ci_low) else ""
            rows.append(
                [r.runtime, num(r.instances, 0), num(r.n, 0), num(r.mean_s, 3), f"{num(r.slowdown, 3)}{ci}"]
            )
        return [
            self.doc.table(
                ["Runtime", "N", "Samples", "Mean execution time (s)", "Slowdown [95 % CI]"],
                rows,
                "Execution time of one sysbench instance and its slowdown (results/stats/scaling/slowdown.tsv).",
                numeric_from=1,
            )
        ]

    def emulation(self) -> list[Block]:
        """What the runs recorded about the `vm` runtime's emulation (the paper's finding itself is
        judged by the findings step and shown by findings.section.study_blocks)."""
        lines = vm_lines(self.doc.env)
        return [md("\n".join(lines))] if lines else []


def vm_lines(env: dict) -> list[str]:
    """A line on the `vm` runtime's emulation, with its recorded reason (environment.json)."""
    accel = vm_acceleration(env)
    if accel is None or accel[0] != "tcg":
        return []
    why = f", because {esc(accel[1])}" if accel[1] else ""
    return [
        f"- The `vm` runtime ran under QEMU's software emulation (TCG){why}: its slowdown is emulation, "
        "not a VM's overhead."
    ]


def section(doc) -> Scaling:
    return Scaling(doc)
