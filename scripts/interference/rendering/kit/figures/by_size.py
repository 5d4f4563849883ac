"""Values against a message size (paper 003's Figures 2 and 3): one panel per quantity, one line
per series on a log size axis, CI bands where given, and published reference points as open
diamonds (a ratio axis gets a line at 1)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D


@dataclass
class Series:
    label: str
    sizes: list[float]
    values: list[float]
    low: list[float] = field(default_factory=list)  # CI, same length as values (or empty)
    high: list[float] = field(default_factory=list)
    color: str = "#222222"
    dashed: bool = False


@dataclass
class Panel:
    title: str
    ylabel: str
    series: list[Series]
    log_y: bool = False
    ratio: bool = False  # a line at 1
    published: list[tuple[float, float, str]] = field(default_factory=list)  # (size, value, color)


def size_panels(panels: list[Panel], published_label: str, xlabel: str = "message size m (bytes)") -> Figure:
    fig = Figure(figsize=(4.2 * len(panels), 3.9), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False).ravel()
    for ax, p in zip(axes, panels):
        for s in p.series:
            x, y = np.asarray(s.sizes, float), np.asarray(s.values, float)
            ax.plot(
                x, y, marker="o", ms=3.5, lw=1.6, color=s.color, ls="--" if s.dashed else "-", label=s.label
            )
            if s.low and s.high:
                lo, hi = np.asarray(s.low, float), np.asarray(s.high, float)
                ok = np.isfinite(lo) & np.isfinite(hi)
                ax.fill_between(x[ok], lo[ok], hi[ok], color=s.color, alpha=0.18, lw=0)
        for size, value, color in p.published:
            ax.plot(size, value, marker="D", ms=6, color=color, mfc="white", mew=1.4, ls="")
        if p.ratio:  # room above 1 for the legend
            ax.axhline(1, color="#222222", lw=0.8)
            ax.set_ylim(0, max(1.35, ax.get_ylim()[1] * 1.1))
        ax.set_xscale("log")
        if p.log_y:
            ax.set_yscale("log")
        ax.set_title(p.title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(p.ylabel)
        ax.grid(True, which="major", alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        if p.published:
            handles.append(
                Line2D([], [], marker="D", ls="", color="#222222", mfc="white", label=published_label)
            )
        ax.legend(handles=handles, fontsize=7.5, frameon=False, loc="best")
    return fig
