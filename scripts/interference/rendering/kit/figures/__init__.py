"""Figures: one module per kind, each drawing from plain data (no study's tables), and the
common style and embedding (a PNG inline in a numbered <figure>: no external request).

  grouped_bars  bars in labelled, coloured groups with CI whiskers (the layout of the next two)
  means         bars of means per group, a dashed baseline
  ir            interference-ratio bars in percent, one y range for all panels
  heatmap       a value per row × column, one panel per group, diverging colours
  scatter       published against reproduced values, with the agreement diagonal
  runtimes      performance relative to a reference runtime, CI whiskers, a line at 1
  forest        estimates with intervals against a band per row (the Findings' claims)"""

from __future__ import annotations

import base64
import io

import matplotlib
from matplotlib.figure import Figure

from interference.rendering.kit.format import esc

# Dark2 and greys: distinguishable for the common colour-vision deficiencies and in greyscale.
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


def style() -> None:
    matplotlib.rcParams.update(
        {
            "font.family": "DejaVu Sans",
            "font.size": 9.5,
            "axes.titlesize": 10.5,
            "axes.titleweight": "bold",
            "axes.labelsize": 9.5,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.grid.axis": "y",
            "grid.color": "#dddddd",
            "grid.linewidth": 0.6,
            "axes.axisbelow": True,
            "xtick.labelsize": 8.5,
            "ytick.labelsize": 8.5,
            "legend.fontsize": 8.5,
            "legend.frameon": False,
            "figure.facecolor": "white",
        }
    )


def embed(fig: Figure, number: int, caption: str, alt: str, width_px: int | None = None) -> str:
    """A self-contained <figure>: the PNG inline, its alt text and its numbered caption (HTML)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=160, bbox_inches="tight", facecolor="white")
    data = base64.b64encode(buf.getvalue()).decode()
    width = width_px or round(fig.get_size_inches()[0] * 96)
    return (
        f'<figure class="rpt-figure" id="figure-{number}">'
        f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}" style="width:min(100%, {width}px)">'
        f"<figcaption><b>Figure {number}.</b> {caption}</figcaption></figure>"
    )
