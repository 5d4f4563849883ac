"""The ping-pong study's tables: the transfer rates, the ratios with their CIs beside the
paper's, Table I's %RSD beside the paper's, and the services' CPU use per test (their headroom)."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block
from interference.rendering.kit.format import interval_level, is_num, num
from interference.studies.pingpong import published
from interference.studies.pingpong.section.data import SYMBOL, message_size
from interference.studies.pingpong.statistics import RATE


class Tables:
    def rate_table(self) -> list[Block]:
        series = self._series(RATE)
        if not series:
            return []
        keys = self._ordered(series)
        sizes = sorted({m for g in series.values() for m in g["message_bytes"]})
        cells = []
        for m in sizes:
            line = [message_size(m)]
            for k in keys:
                r = series[k][series[k]["message_bytes"] == m]
                line.append(f"{num(r['mean'].iloc[0], 0)} ± {num(r['sd'].iloc[0], 0)}" if len(r) else "–")
            cells.append(line)
        cols = ["m"] + [f"{layer} ({rt}) {SYMBOL.get(layer, '')}".strip() for rt, layer in keys]
        return [
            self.doc.table(
                cols,
                cells,
                "trans(m) in KiB/s, mean ± SD of the tests (results/stats/pingpong/summary.tsv).",
                numeric_from=1,
            )
        ]

    def ratio_table(self) -> list[Block]:
        if self.rel.empty:
            return []
        sizes = sorted(set(self.rel["message_bytes"]))
        cells = []
        for (_, layer, base, rt), g in self.rel.groupby(
            ["figure", "layer", "baseline", "runtime"], sort=False
        ):
            by_size = {r.message_bytes: r for r in g.itertuples(index=False)}
            line = [f"{layer} / {base} ({rt})"]
            for m in sizes:
                r = by_size.get(m)
                ci = (
                    f" [{num(r.ci_low, 2)}, {num(r.ci_high, 2)}]"
                    if r is not None and is_num(r.ci_low)
                    else ""
                )
                line.append(f"{num(r.ratio, 2)}{ci}" if r is not None else "–")
            pub = published.FINDINGS.get((layer, base))
            cells.append([*line, f"{num(pub[0], 2)} / {num(pub[1], 2)}" if pub else "–"])
        return [
            self.doc.table(
                ["Ratio (runtime)", *(message_size(m) for m in sizes), "Paper"],
                cells,
                f"Transfer rates relative to another layer at the same m, with 95 % CIs {interval_level(self.rel)} "
                "(results/stats/pingpong/relative.tsv); the paper's values as its text states them for small "
                "(< 100 kB) / large messages.",
                numeric_from=1,
            )
        ]

    def rsd_table(self) -> list[Block]:
        if self.rsd.empty:
            return []
        cells = []
        ours = lambda r: [r.layer, num(r.data_gb, 1), num(r.min_rsd, 1), num(r.avg_rsd, 1), num(r.max_rsd, 1)]  # noqa: E731
        for name, (gb, lo, avg, hi) in published.TABLE_I.items():
            rows = [
                r for r in self.rsd.itertuples(index=False) if r.layer == published.TABLE_I_LAYER.get(name)
            ]
            for r in rows or [None]:
                mine = [f"{r.layer} ({r.runtime})", *ours(r)[1:]] if r else ["–"] * 5
                cells.append([name, *mine, f"{gb}", num(lo, 1), num(avg, 1), num(hi, 1)])
        for r in self.rsd.itertuples(index=False):
            if r.layer not in published.TABLE_I_LAYER.values():
                cells.append(["–", f"{r.layer} ({r.runtime})", *ours(r)[1:], "–", "–", "–", "–"])
        return [
            self.doc.table(
                [
                    "Paper's experiment",
                    "Our layer",
                    "GB",
                    "min %RSD",
                    "avg",
                    "max",
                    "Paper GB",
                    "min",
                    "avg",
                    "max",
                ],
                cells,
                "%RSD of the transfer rate over a message size's tests, min/avg/max over the sizes (our Table I, "
                f"results/stats/pingpong/rsd.tsv) beside {published.SOURCE}.",
                numeric_from=2,
            )
        ]

    def headroom_table(self) -> list[Block]:
        cpu = {k: self.sum[self.sum["metric"] == f"{k}_cpu"] for k in ("ping", "pong", "ab")}
        if cpu["ping"].empty:
            return []
        peak = {k: d.groupby(["runtime", "layer"])["mean"].max() for k, d in cpu.items()}
        cells = [
            [layer, rt, *(num(peak[k].get((rt, layer)), 2) for k in cpu)]
            for rt, layer in self._ordered(peak["ping"].index)
        ]
        return [
            self.doc.table(
                ["Layer", "Runtime", "ping (cores)", "pong (cores)", "ab (cores)"],
                cells,
                "The services' headroom: CPU time each process used during a test over the test's length, the "
                "largest mean over the message sizes (results/stats/pingpong/summary.tsv, metrics *_cpu). Each "
                "serves a connection on one thread, so 1 core is its limit: below it, it was waiting for the "
                "network, not computing.",
                numeric_from=2,
            )
        ]

    def tables(self) -> list[Block]:
        return self.rate_table() + self.ratio_table() + self.rsd_table() + self.headroom_table()
