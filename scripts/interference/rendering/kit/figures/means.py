"""Bars of means with 95 % CIs per group (case) and bar (partner), a dashed baseline."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from interference.rendering.kit.figures.grouped_bars import Panel, draw, grid

THOUSANDS = FuncFormatter(lambda v, _: f"{v:,.0f}".replace(",", "\u2009").replace("-", "\u2212"))


def means_figure(panels: list[Panel]) -> Figure:
    fig, axes = grid(len(panels), panels[0].n_bars(), 3.3)
    for ax, panel in zip(axes, panels):
        v = draw(ax, panel)
        if panel.baseline is not None and np.isfinite(panel.baseline):
            ax.axhline(panel.baseline, color="#444444", linestyle="--", linewidth=0.9, zorder=3)
        if np.nanmax(np.abs(v)) >= 10000:
            ax.yaxis.set_major_formatter(THOUSANDS)
        ax.margins(y=0.08)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    return fig
