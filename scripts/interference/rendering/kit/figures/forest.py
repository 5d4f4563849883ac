"""A forest plot: one row per estimate, its interval as a whisker, against a band per row (the
range a claim allows), colour by group of verdict; one panel per quantity, rows grouped under
their headings (a line between groups)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

BAND = "#dbe7f3"


@dataclass
class Row:
    label: str
    group: str  # rows of one group sit together, a line between groups
    estimate: float
    low: float  # the interval (NaN: none)
    high: float
    band_low: float  # the range allowed (±inf: open on that side)
    band_high: float
    color: str


@dataclass
class Panel:
    xlabel: str
    rows: list[Row]
    log: bool = False  # a log axis (ratios)


def _limits(rows: list[Row], log: bool) -> tuple[float, float]:
    values = [x for r in rows for x in (r.estimate, r.low, r.high, r.band_low, r.band_high)
              if math.isfinite(x) and (x > 0 or not log)]  # fmt: skip
    lo, hi = min(values), max(values)
    if log:
        return lo / 1.4, hi * 1.4
    pad = 0.08 * (hi - lo or 1.0)
    return lo - pad, hi + pad


def forest(panels: list[Panel], legend: list[tuple[str, str]]) -> Figure:
    """legend: (label, colour) of the point colours; the band's entry is added."""
    panels = [p for p in panels if p.rows]
    heights = [len(p.rows) + 1.2 for p in panels]
    # Rows 0.17 in apart: the default report's 38 scored findings fit one printed page.
    fig = Figure(figsize=(6.4, 0.9 + 0.17 * sum(heights)), layout="constrained")
    axes = fig.subplots(len(panels), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        lo, hi = _limits(panel.rows, panel.log)
        if panel.log:
            ax.set_xscale("log")
        for y, r in enumerate(panel.rows):
            ax.fill_betweenx(
                [y - 0.4, y + 0.4], max(r.band_low, lo), min(r.band_high, hi), color=BAND, zorder=0
            )
            if math.isfinite(r.low) and math.isfinite(r.high):  # a log axis starts the whisker at its edge
                ax.plot([max(r.low, lo), min(r.high, hi)], [y, y], color=r.color, linewidth=1.4, zorder=2)
            ax.plot(r.estimate, y, "o", color=r.color, markersize=5, markeredgecolor="white",
                    markeredgewidth=0.5, zorder=3)  # fmt: skip
            if y and r.group != panel.rows[y - 1].group:
                ax.axhline(y - 0.5, color="#bbbbbb", linewidth=0.6)
        ax.set_xlim(lo, hi)
        ax.set_ylim(len(panel.rows) - 0.5, -0.5)  # the first row on top
        ax.set_yticks(range(len(panel.rows)), [r.label for r in panel.rows], fontsize=8)
        ax.set_xlabel(panel.xlabel)
        ax.grid(True, axis="x")
    handles = [Line2D([], [], marker="o", linestyle="-", color=c, label=name) for name, c in legend]
    handles.append(Patch(color=BAND, label="the claim's range"))
    fig.legend(handles=handles, loc="outside upper center", ncols=len(handles), frameon=False, fontsize=8)
    return fig
