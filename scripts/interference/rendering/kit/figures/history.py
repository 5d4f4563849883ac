"""Each cell's mean over the saved sessions and today, relative to the first session, with the
change points history.py found (results/stats/<study>/history.tsv)."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.figure import Figure

MAX_CELLS = 6


def chosen(history: pd.DataFrame) -> list[str]:
    """The cells shown: those with a change point first, then the largest relative spread."""
    spread = history.groupby("cell")["mean"].agg(
        lambda m: (m.max() - m.min()) / abs(m.iloc[0]) if m.iloc[0] else 0
    )
    moved = history.groupby("cell")["change_points"].first().fillna("").astype(str).ne("")
    order = sorted(spread.index, key=lambda c: (not moved[c], -spread[c]))
    return order[:MAX_CELLS]


def figure(history: pd.DataFrame) -> Figure:
    cells = chosen(history)
    cols = min(3, len(cells))
    rows = math.ceil(len(cells) / cols)
    fig = Figure(figsize=(3.4 * cols, 2.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, cell in zip(axes, cells):
        d = history[history["cell"] == cell].sort_values("order")
        first = d["mean"].iloc[0]
        ax.plot(d["session"], 100 * (d["mean"] / first - 1), marker="o", color="#1f5f8b")
        ax.axhline(0, color="#999", linewidth=0.8)
        points = [p for p in str(d["change_points"].iloc[0]).split(", ") if p and p != "nan"]
        names = list(d["session"])
        for p in points:
            ax.axvline(names.index(p) + 0.5, color="#c0392b", linestyle="--", linewidth=1)
        ax.set_title(textwrap.fill(cell, 34), fontsize=8)
        ax.set_ylabel("mean vs first (%)")
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    for ax in axes[len(cells) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig
