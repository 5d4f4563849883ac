"""The network study's figure: every row's throughput and latency relative to bare metal's
host → host, the paper's ratio for the same row as a diamond."""

from __future__ import annotations

import numpy as np

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.figures import PALETTE
from interference.rendering.kit.figures.network import Ratio, ratio_panels
from interference.rendering.kit.format import esc, interval_level, is_num
from interference.studies.network import published
from interference.studies.network.section.data import ends


class Figure:
    def _ratios(self, metric: str, rows) -> list[Ratio]:
        colors = {rt: PALETTE[i % len(PALETTE)] for i, rt in enumerate(dict.fromkeys(self.rel["runtime"]))}
        out = []
        for r in rows[rows["metric"] == metric].itertuples(index=False):
            pub = published.relative(published.entity_of(r.runtime), r.direction, r.mode)
            out.append(
                Ratio(
                    f"{r.runtime}: {ends(r.runtime, r.direction)}, {r.mode}",
                    r.ratio,
                    r.ci_low if is_num(r.ci_low) else np.nan,
                    r.ci_high if is_num(r.ci_high) else np.nan,
                    None if pub is None else pub[0 if metric == "throughput" else 1],
                    colors[r.runtime],
                )
            )
        return out

    def figure(self) -> list[Block]:
        if self.rel.empty:
            return [md("No network results (or no bare-metal host-to-host run to relate them to).")]
        refs = list(dict.fromkeys(self.rel["reference"]))
        remote = self.rel["direction"].eq("to-remote")
        tables = [
            t
            for t, shown in (("Tables II and III", (~remote).any()), ("Tables IV and V", remote.any()))
            if shown
        ]
        panels = {
            "throughput (higher: faster)": self._ratios("throughput", self.rel),
            "round-trip latency (lower: faster)": self._ratios("latency", self.rel),
        }
        fig = ratio_panels(panels, f"× {refs[0]}" if len(refs) == 1 else "× bare metal (same direction)")
        over = (
            esc(refs[0])
            if len(refs) == 1
            else "bare metal's row of the same direction (" + esc(", ".join(refs)) + ")"
        )
        return [
            self.doc.figure(
                fig,
                f"Throughput and latency of every runtime, direction and network mode relative to {over} "
                f"(runtime/direction/mode; log axis, 95 % CI whiskers {interval_level(self.rel)}); diamonds: paper 001's ratio for "
                f"the same row ({' and '.join(tables)}, over their Host - Host row).",
                "Two panels of horizontal bars, throughput and latency ratios per row, with the paper's ratios "
                "as diamonds.",
            )
        ]
