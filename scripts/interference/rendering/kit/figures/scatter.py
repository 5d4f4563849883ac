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
    centres = np.r_[[p.x for p in points], [p.y for p in points]]
    ends = np.r_[[0 if np.isnan(p.low) else p.low for p in points],
                 [0 if np.isnan(p.high) else p.high for p in points],
                 [0 if np.isnan(p.x_low) else p.x_low for p in points],
                 [0 if np.isnan(p.x_high) else p.x_high for p in points]]  # fmt: skip
    # The points set the scale; an interval reaches at most twice as far (a very wide one runs
    # off the edge rather than shrinking every point to the middle).
    reach = max(5.0, float(np.nanmax(np.abs(centres))))
    lim = min(max(reach, float(np.nanmax(np.abs(ends)))), 2 * reach) * 1.1
    ax.axhspan(-negligible, negligible, color="#f0f0f0", zorder=0)
    ax.axvspan(-negligible, negligible, color="#f0f0f0", zorder=0)
    ax.plot([-lim, lim], [-lim, lim], color="#999999", linewidth=0.8, linestyle="--")
    ax.axhline(0, color="#444444", linewidth=0.6)
    ax.axvline(0, color="#444444", linewidth=0.6)
    for p in points:
        # Each interval drawn as it is, not as bars from the point: a point may lie outside its
        # interval (a prediction from the point estimates, its interval from skewed draws).
        if not np.isnan(p.low):
            ax.vlines(p.x, p.low, p.high, color="#aaaaaa", linewidth=0.8)
        if not np.isnan(p.x_low):
            ax.hlines(p.y, p.x_low, p.x_high, color="#aaaaaa", linewidth=0.8)
        ax.plot(p.x, p.y, p.marker, color=p.color, markersize=6, markeredgecolor="white", markeredgewidth=0.5)
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
