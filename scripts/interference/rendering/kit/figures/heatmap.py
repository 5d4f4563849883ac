"""A heat map of percentages, rows × columns, one panel per group: a diverging map centred on
zero (red below, blue above), the value written in each cell, grey where there is none."""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure


def heatmap_figure(
    values: np.ndarray,
    panels: list[tuple[str, str]],
    rows: list[str],
    columns: list[str],
    ylabel: str,
    xlabel: str,
    colorbar_label: str,
) -> Figure:
    """values[panel, row, column] in percent; panels: (title, colour)."""
    vmax = max(5.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 5.0)
    norm = TwoSlopeNorm(vcenter=0, vmin=-vmax, vmax=vmax)
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#eeeeee")
    cell_w = 0.62 if len(columns) > 3 else 0.75
    w = len(panels) * (len(columns) * cell_w + 0.6) + 2.6
    h = len(rows) * 0.36 + 1.5
    fig = Figure(figsize=(min(max(w, 7.5), 12), max(h, 2.8)), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True).ravel()
    im = None
    for k, (ax, (title, color)) in enumerate(zip(axes, panels)):
        im = ax.imshow(values[k], cmap=cmap, norm=norm, aspect="auto")
        ax.set_xticks(range(len(columns)))
        ax.set_xticklabels(columns)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
        ax.set_title(title, color=color)
        ax.grid(False)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        # White lines between cells.
        ax.set_xticks(np.arange(-0.5, len(columns)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        for ri in range(len(rows)):
            for ci in range(len(columns)):
                v = values[k, ri, ci]
                txt = "–" if np.isnan(v) else f"{v:+.0f}".replace("-", "\u2212")
                dark = not np.isnan(v) and abs(v) > 0.55 * vmax
                ax.text(
                    ci, ri, txt, ha="center", va="center", fontsize=8, color="white" if dark else "#222222"
                )
    axes[0].set_ylabel(ylabel)
    fig.supxlabel(xlabel, fontsize=9.5)
    cb = fig.colorbar(im, ax=list(axes), shrink=0.9, pad=0.02)
    cb.set_label(colorbar_label)
    return fig
