"""Published against reproduced values (percent), one point per combination: colour by group,
marker by series, the reproduced CI as a whisker (and the x value's where it has one), the diagonal of agreement and grey bands where
both are negligible."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

MARKERS = "osD^vP*X"


@dataclass
class Point:
    x: float  # published
    y: float  # reproduced
    low: float  # reproduced CI (NaN: none)
    high: float
    color: str
    marker: str
    x_low: float = np.nan  # published's interval (NaN: none, as for a published table's value)
    x_high: float = np.nan


def comparison_scatter(
    points: list[Point],
    negligible: float,
    colors: list[tuple[str, str]],
    markers: list[tuple[str, str]],
    xlabel: str,
    ylabel: str,
) -> Figure:
    """colors / markers: legend entries (label, colour) and (label, marker)."""
    fig = Figure(figsize=(5.6, 4.6), layout="constrained")
    ax = fig.subplots()
    extent = np.r_[[p.x for p in points], [p.y for p in points],
                   [0 if np.isnan(p.low) else p.low for p in points],
                   [0 if np.isnan(p.high) else p.high for p in points],
                   [0 if np.isnan(p.x_low) else p.x_low for p in points],
                   [0 if np.isnan(p.x_high) else p.x_high for p in points]]  # fmt: skip
    lim = max(5.0, float(np.nanmax(np.abs(extent)))) * 1.1
    ax.axhspan(-negligible, negligible, color="#f0f0f0", zorder=0)
    ax.axvspan(-negligible, negligible, color="#f0f0f0", zorder=0)
    ax.plot([-lim, lim], [-lim, lim], color="#999999", linewidth=0.8, linestyle="--")
    ax.axhline(0, color="#444444", linewidth=0.6)
    ax.axvline(0, color="#444444", linewidth=0.6)
    for p in points:
        yerr = None if np.isnan(p.low) else [[p.y - p.low], [p.high - p.y]]
        xerr = None if np.isnan(p.x_low) else [[p.x - p.x_low], [p.x_high - p.x]]
        ax.errorbar(p.x, p.y, yerr=yerr, xerr=xerr, fmt=p.marker, color=p.color, ecolor="#aaaaaa", elinewidth=0.8,
                    markersize=6, markeredgecolor="white", markeredgewidth=0.5)  # fmt: skip
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.grid(True, axis="both")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    handles = [Patch(color=c, label=label) for label, c in colors]
    handles += [Line2D([], [], marker=m, linestyle="", color="#555555", label=label) for label, m in markers]
    ax.legend(handles=handles, loc="upper left", fontsize=8)
    return fig
