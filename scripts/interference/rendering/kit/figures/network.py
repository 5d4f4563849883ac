"""Ratios to a reference row with the published ratio beside each: one panel per metric, one
horizontal bar per row (log axis: virtual switches and emulated NICs sit far below 1), CI
whiskers, a diamond at the paper's value, a line at 1 (paper 001's Tables II and III, relative
to their Host - Host row)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator


@dataclass
class Ratio:
    row: str
    value: float
    low: float
    high: float
    published: float | None  # the paper's ratio for the same row, if it has one
    color: str


def ratio_panels(panels: dict[str, list[Ratio]], xlabel: str) -> Figure:
    rows = list(dict.fromkeys(r.row for rs in panels.values() for r in rs))
    fig = Figure(figsize=(9.5, 1.0 + 0.28 * len(rows)), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False).ravel()
    for ax, (title, ratios) in zip(axes, panels.items()):
        by_row = {r.row: r for r in ratios}
        ys = np.arange(len(rows))
        for y, row in zip(ys, rows):
            r = by_row.get(row)
            if r is None or not np.isfinite(r.value):
                continue
            ax.barh(y, r.value, height=0.7, color=r.color)
            if np.isfinite(r.low) and np.isfinite(r.high):
                ax.errorbar(r.value, y, xerr=[[r.value - max(r.low, 1e-6)], [r.high - r.value]], fmt="none",
                            ecolor="#222222", elinewidth=1, capsize=2.5)  # fmt: skip
            if r.published:
                ax.plot(r.published, y, marker="D", ms=5, color="#222222", mfc="white", mew=1.2)
        ax.axvline(1, color="#222222", lw=1)
        ax.set_xscale("log")
        # Plain numbers (0.1, 2, 5), not powers of ten: readers compare ratios near 1.
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
    axes[0].invert_yaxis()  # the axes share y: once for all, first row on top
    colors = dict.fromkeys((r.row.split(":")[0], r.color) for rs in panels.values() for r in rs)
    handles = [Patch(color=c, label=name) for name, c in colors]
    handles.append(Line2D([], [], marker="D", ls="", color="#222222", mfc="white", label="paper 001"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    return fig
