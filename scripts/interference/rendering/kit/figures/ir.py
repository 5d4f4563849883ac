"""Interference-ratio bars in percent of the baseline, with CIs, a line at zero and one y range
for all panels (so that one target's metrics compare at a glance)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from interference.rendering.kit.figures.grouped_bars import Panel, draw, grid


def ir_figure(panels: list[Panel]) -> Figure:
    """Panels whose values and bounds are already in percent."""
    vals = np.array(
        [y for p in panels for g in p.groups for y in (*g.values, *g.lows, *g.highs)], dtype=float
    )
    vals = vals[np.isfinite(vals)]
    span = max(5.0, float(np.abs(vals).max())) if vals.size else 5.0
    ymin = min(0.0, float(vals.min())) if vals.size else -5.0
    ymax = max(0.0, float(vals.max())) if vals.size else 5.0
    fig, axes = grid(len(panels), panels[0].n_bars(), 3.0)
    for ax, panel in zip(axes, panels):
        draw(ax, panel)
        ax.axhline(0, color="#222222", linewidth=0.8)
        ax.set_ylim(ymin - 0.08 * span, ymax + 0.08 * span)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    return fig
