"""Performance of each runtime relative to a reference runtime: one horizontal bar per
microservice and metric, one colour per runtime, CI whiskers and a line at 1 (the reference)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch


@dataclass
class Relative:
    row: str  # the microservice and metric
    runtime: str
    value: float  # > 1: better than the reference
    low: float
    high: float


def runtimes_figure(points: list[Relative], colors: dict[str, str], reference: str) -> Figure:
    rows = list(dict.fromkeys(p.row for p in points))
    runtimes = list(dict.fromkeys(p.runtime for p in points))
    height = 0.8 / len(runtimes)
    fig = Figure(
        figsize=(7.5, 0.9 + 0.22 * len(rows) * len(runtimes) + 0.25 * len(rows)), layout="constrained"
    )
    ax = fig.subplots()
    for k, rt in enumerate(runtimes):
        ps = {p.row: p for p in points if p.runtime == rt}
        ys = np.arange(len(rows)) - 0.4 + height * (k + 0.5)
        v = np.array([ps[r].value if r in ps else np.nan for r in rows], dtype=float)
        lo = np.array([ps[r].low if r in ps else np.nan for r in rows], dtype=float)
        hi = np.array([ps[r].high if r in ps else np.nan for r in rows], dtype=float)
        err = np.vstack([np.where(np.isnan(lo), 0, v - lo), np.where(np.isnan(hi), 0, hi - v)])
        # Bars grow from 1 (the reference) towards better or worse.
        ax.barh(ys, np.nan_to_num(v - 1), left=1, height=height * 0.9, color=colors[rt], label=rt)
        ax.errorbar(np.where(np.isnan(v), 1, v), ys, xerr=err, fmt="none", ecolor="#222222", elinewidth=1,
                    capsize=2.5)  # fmt: skip
    ax.axvline(1, color="#222222", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    ax.invert_yaxis()
    ax.grid(True, axis="x")
    ax.grid(False, axis="y")
    ax.set_xlabel(f"performance relative to {reference} (> 1: better, whatever the metric's direction)")
    ax.legend(handles=[Patch(color=colors[r], label=r) for r in runtimes], loc="lower right", fontsize=8)
    return fig
