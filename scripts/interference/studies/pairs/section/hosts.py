"""Hosts side by side (paper 004's fog vs edge): with results of two or more hosts (one imported
with interference.steps.transfer), each case's performance on every host relative to the reference
host, per runtime, microservice, partner and metric, with bootstrap CIs (results/stats/pairs/
hosts.tsv), and the host × case analysis of variance (host_anova.tsv)."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures import PALETTE
from interference.rendering.kit.figures.runtimes import Relative, runtimes_figure
from interference.rendering.kit.format import and_list, esc, is_num, num, p_str
from interference.studies.pairs import schemas
from interference.studies.pairs.section.data import PairsData

HOST_NUMERIC = schemas.HOSTS.numeric
ANOVA_NUMERIC = schemas.HOST_ANOVA.numeric


class Hosts:
    """Every case on each host relative to the reference host, and the host × case ANOVA."""

    def __init__(self, data: PairsData):
        self.data = data

    def hosts_blocks(self) -> list[Block]:
        st = self.data.doc.stats
        ratios = st.table("pairs", "hosts", HOST_NUMERIC)
        if ratios.empty or not len(ratios.columns):
            hosts = sorted(set(self.data.summary["host"]))
            return [md(f"These results hold one host ({esc(and_list(hosts))}); import another machine's results "
                       "(README, *Several hosts*) to compare hosts here.")]  # fmt: skip
        anova = st.table("pairs", "host_anova", ANOVA_NUMERIC)
        ref = ratios["reference_host"].iloc[0]
        others = sorted(set(ratios["host"]))
        blocks = [
            md(f"Results of {esc(and_list([ref, *others]))}. Each case's mean on {esc(and_list(others))} relative to "
               f"the same case on {esc(ref)} (above 1: better on that host, whatever the metric's direction), and "
               "per runtime, microservice and metric an analysis of variance of log(value) with host and case as "
               "factors: a significant host:case term means the placement cases cost differently on the hosts. "
               f"The hosts, as each recorded itself (cores and memory it could use): {self.data.doc.host_line()}.")
        ]  # fmt: skip
        blocks += self.host_sizes_blocks()
        colors = dict(zip(others, PALETTE))
        for runtime, d in ratios.groupby("runtime", sort=True):
            points = [
                Relative(f"{r.target}{'' if r.partner in ('', 'NA') else f'(+{r.partner})'} case {r.case} "
                         f"{r.metric.replace('_', ' ')}", r.host, r.relative,
                         r.relative_ci_low if is_num(r.relative_ci_low) else float("nan"),
                         r.relative_ci_high if is_num(r.relative_ci_high) else float("nan"))
                for r in d.itertuples(index=False) if is_num(r.relative)
            ]  # fmt: skip
            if points:
                blocks.append(
                    self.data.figure(
                        runtimes_figure(points, colors, ref),
                        f"{esc(runtime)}: each case on {esc(and_list(others))} relative to {esc(ref)} per "
                        "microservice (partner), case and metric; whiskers: 95 % bootstrap interval.",
                        alt=f"Bar chart of performance relative to {ref} per case and microservice",
                    )
                )
        rows = [
            [a.runtime, a.target, a.metric.replace("_", " "), a.term, num(a.df, 0), num(a.F, 2), p_str(a.p)]
            for a in anova.itertuples(index=False)
            if a.term and a.term != "residual"
        ]
        if rows:
            blocks.append(
                self.data.table(
                    ["Runtime", "Microservice", "Metric", "Term", "df", "F", "p"],
                    rows,
                    "Analysis of variance of log(value) ~ host × case per runtime, microservice and metric "
                    "(results/stats/pairs/host_anova.tsv).",
                    numeric_from=4,
                )
            )
        return blocks

    def host_sizes_blocks(self) -> list[Block]:
        """Where a microservice's workload size differs between hosts (the config's `hosts:`), the
        comparison mixes machine and size: say so, with each host's sizes."""
        members = self.data.members
        if members.empty:
            return []
        sizes = {}
        for host, ms, size in members[["host", "microservice", "sizes"]].itertuples(index=False):
            sizes.setdefault(ms, {}).setdefault(host, set()).add(size)
        differing = [
            f"{esc(ms)} ({'; '.join(f'{esc(h)}: {esc(and_list(sorted(v)))}' for h, v in sorted(by_host.items()))})"
            for ms, by_host in sizes.items()
            if len({frozenset(v) for v in by_host.values()}) > 1
        ]
        if not differing:
            return [md("Every microservice ran with the same workload size on every host.")]
        return [md(f"**The workload sizes differ between the hosts** (the config's per-host protocol) for "
                   f"{and_list(differing)}: for these, a ratio between hosts is the machine and the size together.")]  # fmt: skip
