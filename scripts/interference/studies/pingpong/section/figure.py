"""The ping-pong study's figure: trans(m) per layer and the ratios of paper 003's Figure 3,
with the ratios the paper states as diamonds."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures.by_size import Panel, Series, size_panels
from interference.rendering.kit.format import interval_level
from interference.studies.pingpong import published
from interference.studies.pingpong.section.data import COLORS
from interference.studies.pingpong.statistics import BARE_METAL, RATE


class Figure:
    def figure(self) -> list[Block]:
        if self.sum.empty:
            return [md("No ping-pong results.")]
        absolute = [
            Series(f"{rt}: {layer}", list(g["message_bytes"]), list(g["mean"]), color=COLORS[layer],
                   dashed=layer == "loopback")
            for (rt, layer), g in ((k, self._series(RATE)[k]) for k in self._ordered(self._series(RATE)))
        ]  # fmt: skip
        panels = [Panel("trans(m), absolute (paper's Fig. 2)", "transfer rate (KiB/s)", absolute, log_y=True)]
        for fig_id, title in (("3a", "relative to the reference (Fig. 3a)"), ("3b", "overlay's and encryption's own cost (Fig. 3b)")):  # fmt: skip
            rows = self.rel[self.rel["figure"] == fig_id] if not self.rel.empty else self.rel
            series, points = [], []
            for (rt, layer, base), g in rows.groupby(["runtime", "layer", "baseline"], sort=False):
                g = g.sort_values("message_bytes")
                series.append(Series(f"{layer} / {base}" + ("" if rt == BARE_METAL else f" ({rt})"),
                                     list(g["message_bytes"]), list(g["ratio"]), list(g["ci_low"]),
                                     list(g["ci_high"]), COLORS[layer]))  # fmt: skip
                pub = published.FINDINGS.get((layer, base))
                if pub:
                    small = [m for m in g["message_bytes"] if m < published.SMALL_LARGE_SPLIT]
                    large = [m for m in g["message_bytes"] if m >= published.SMALL_LARGE_SPLIT]
                    points += [(m, pub[0], COLORS[layer]) for m in small[-1:]]
                    points += [(m, pub[1], COLORS[layer]) for m in large[-1:]]
            if series:
                panels.append(Panel(title, "ratio of transfer rates", series, ratio=True, published=points))
        fig = size_panels(panels, "paper 003 (its text)")
        return [
            self.doc.figure(
                fig,
                "Transfer rate trans(m) per layer (left; mean of the tests, log axes), and "
                f"the ratios of paper 003's Figure 3 (bands: 95 % CI {interval_level(self.rel)}); diamonds: the ratios the paper "
                "states for small and for large messages, drawn at our largest size on each side of 100 kB.",
                "Line charts of transfer rate and of rate ratios against message size, one line per layer.",
            )
        ]
