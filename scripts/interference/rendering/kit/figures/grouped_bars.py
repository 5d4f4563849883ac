"""Bars in labelled, coloured groups (the papers' case blocks) with CI whiskers: the layout the
means and IR figures share. A panel per metric; one row of panels when they fit, else two columns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from matplotlib.figure import Figure


@dataclass
class Group:
    name: str  # shown under the group, in its colour
    color: str
    labels: list[str]  # one per bar
    values: list[float]
    lows: list[float]  # CI bounds (NaN: no interval)
    highs: list[float]


@dataclass
class Panel:
    title: str
    ylabel: str
    groups: list[Group] = field(default_factory=list)
    baseline: float | None = None  # a dashed reference line

    def n_bars(self) -> int:
        return sum(len(g.values) for g in self.groups)


def grid(n: int, n_bars: int, panel_h: float):
    """(figure, axes) for n panels of n_bars bars."""
    per_bar = 0.36
    if n == 1:
        ncols = 1
    elif n * (n_bars * per_bar + 1.2) <= 11.5:
        ncols = n
    else:
        ncols = 2
    nrows = math.ceil(n / ncols)
    width = min(11.5, max(6.5, ncols * (n_bars * per_bar + 1.4)))
    if n > 1:
        width = 11.5 if ncols == 2 else width
    fig = Figure(figsize=(width, panel_h * nrows + 0.3), layout="constrained")
    fig.get_layout_engine().set(h_pad=0.08, hspace=0.06)
    return fig, fig.subplots(nrows, ncols, squeeze=False).ravel()


def mark_missing(ax, xs, values) -> None:
    """Write "no data" where a bar has no value, so that it is not read as a zero."""
    for x, v in zip(xs, values):
        if not np.isfinite(v):
            ax.text(x, 0, "no data", rotation=90, ha="center", va="bottom", fontsize=7, color="#777777")


def draw(ax, panel: Panel) -> np.ndarray:
    """The panel's bars with whiskers and group labels; returns the bar values."""
    xs, spans, x = [], [], 0.0
    for g in panel.groups:
        start = x
        for _ in g.values:
            xs.append(x)
            x += 1
        spans.append((g, start, x - 1))
        x += 0.7  # a gap between groups
    xs = np.array(xs)
    v = np.array([y for g in panel.groups for y in g.values], dtype=float)
    lo = np.array([y for g in panel.groups for y in g.lows], dtype=float)
    hi = np.array([y for g in panel.groups for y in g.highs], dtype=float)
    err = np.vstack([np.where(np.isnan(lo), 0, v - lo), np.where(np.isnan(hi), 0, hi - v)])
    colors = [g.color for g in panel.groups for _ in g.values]
    ax.bar(xs, np.nan_to_num(v), color=colors, width=0.8, edgecolor="white", linewidth=0.5)
    ax.errorbar(xs, np.nan_to_num(v), yerr=err, fmt="none", ecolor="#222222", elinewidth=1, capsize=3)
    mark_missing(ax, xs, v)
    labels = [lab for g in panel.groups for lab in g.labels]
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=8.5 if len(labels) <= 12 else 7)
    if len(xs):
        ax.set_xlim(xs.min() - 0.7, xs.max() + 0.7)
    # Group names on a secondary axis, so that the layout engine makes room for them.
    sec = ax.secondary_xaxis("bottom")
    sec.set_xticks([(a + b) / 2 for _, a, b in spans])
    sec.set_xticklabels([g.name for g, _, _ in spans])
    sec.tick_params(axis="x", length=0, pad=17)
    sec.spines["bottom"].set_visible(False)
    for lab, (g, _, _) in zip(sec.get_xticklabels(), spans):
        lab.set_color(g.color)
        lab.set_fontweight("bold")
    for _, a, _ in spans[1:]:
        ax.axvline(a - 0.85, color="#e4e4e4", linewidth=0.8, zorder=0)
    ax.set_title(panel.title)
    ax.set_ylabel(panel.ylabel)
    return v
