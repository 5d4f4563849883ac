"""The scaling study's report section: its method, the slowdown figure and table, and a
generated verdict on paper 001's finding ("no significant performance impact for CPU-intensive
executions on containers or virtual machines compared to bare metal")."""

from __future__ import annotations

import pandas as pd

from interference.findings import verdict as rule
from interference.report import environment
from interference.report.blocks import Block, md
from interference.report.figures.scaling import Series, scaling_figure
from interference.report.format import esc, is_num, num, numi, recorded

CLOSE = 0.05  # within 5 % of the reference at every N: "≈ bare metal"


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
                "with a 95 % bootstrap interval; the paper plots the same ratio (its Fig. 3, 12 cores, N up to 64)."
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
                f"{esc(ref)} (95 % bootstrap whiskers); the dashed line is this machine's core count.",
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

    def verdict(self) -> list[Block]:
        """Each runtime against the reference at the same N, by the findings' rule
        (findings.verdict): the paper's "≈ bare metal" holds where the ratio's 95 % CI lies within
        ±CLOSE at every N, fails where it lies outside at some N, and is inconclusive otherwise or
        with too few samples."""
        s = self.summary
        if s.empty or self.slowdown.empty:
            return []
        ref_rt = self.slowdown["reference"].iloc[0].split(",")[0]
        if ref_rt not in set(s["runtime"]):
            return []
        base = s[s["runtime"] == ref_rt].set_index("instances")
        band = rule.Band(1 - CLOSE, 1 + CLOSE)
        lines = []
        for rt, g in s[s["runtime"] != ref_rt].groupby("runtime"):
            judged = []
            for n_inst, r in g.set_index("instances").sort_index().iterrows():
                if n_inst not in base.index:
                    continue
                b = base.loc[n_inst]
                m = rule.Measure("", *rule.ratio_from_summaries(r["mean"], r["sd"], r["n"], b["mean"], b["sd"], b["n"]),
                              int(min(r["n"], b["n"])))  # fmt: skip
                judged.append((int(n_inst), m, *rule.judge(m, band, lambda x: f"{x:.2f}×")))
            if not judged:
                continue
            ratios = [m.estimate for _, m, _, _ in judged]
            head = (
                f"- **{esc(rt)} against {esc(ref_rt)}** for CPU: at N = {', '.join(str(n) for n, *_ in judged)} "
                f"its instances take {num(min(ratios), 3)}–{num(max(ratios), 3)} × the reference's time at the same N"
            )
            failed = [(n, m) for n, m, verdict, _ in judged if verdict == rule.NOT_REPRODUCED]
            open_ = [(n, reason) for n, _, verdict, reason in judged if verdict == rule.INCONCLUSIVE]
            if failed:
                n, m = failed[0]
                tail = (f"the paper's finding of no significant impact does not hold here within ±{CLOSE:.0%}: at N = {n} "
                        f"{num(m.estimate, 3)}× [{num(m.low, 3)}, {num(m.high, 3)}]")  # fmt: skip
            elif open_:
                n, reason = open_[0]
                tail = f"whether the paper's finding holds within ±{CLOSE:.0%} cannot be told here (at N = {n}: {esc(reason)})"
            else:
                tail = f"the paper's finding of no significant impact holds here: every 95 % CI lies within ±{CLOSE:.0%}"
            lines.append(f"{head}; {tail}.")
        lines += vm_lines(self.doc.env)
        return [md("Verdict, generated from the table:\n\n" + "\n".join(lines))] if lines else []


def vm_lines(env: dict) -> list[str]:
    """A line on the `vm` runtime's emulation, with its recorded reason (environment.json)."""
    accel = environment.vm_acceleration(env)
    if accel is None or accel[0] != "tcg":
        return []
    why = f", because {esc(accel[1])}" if accel[1] else ""
    return [
        f"- The `vm` runtime ran under QEMU's software emulation (TCG){why}: its slowdown is emulation, "
        "not a VM's overhead."
    ]


def section(doc) -> Scaling:
    return Scaling(doc)
