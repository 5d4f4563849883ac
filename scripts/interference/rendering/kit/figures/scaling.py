"""A value against the number of concurrent entities (log2 axis), one line per runtime with CI
whiskers, an optional dotted reference line (a slowdown of 1) and a dashed one at the core
count, where the curves are expected to bend (paper 001's Fig. 3 and 4)."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from interference.rendering.kit.figures import PALETTE


@dataclass
class Series:
    label: str
    n: list[int]
    value: list[float]
    low: list[float]
    high: list[float]


def scaling_figure(
    series: list[Series],
    cores: int | None,
    ylabel: str,
    xlabel: str = "concurrent instances N",
    reference: float | None = 1.0,
    log_y: bool = False,
) -> Figure:
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.subplots()
    for i, s in enumerate(series):
        # On a log axis a whisker cannot reach 0 or below (a t interval of 2 samples can): it stops at v/10.
        low = [max(lo, v / 10) if log_y else lo for v, lo in zip(s.value, s.low)]
        err = [[v - lo for v, lo in zip(s.value, low)], [hi - v for v, hi in zip(s.value, s.high)]]
        ax.errorbar(s.n, s.value, yerr=err, marker="o", ms=4, lw=1.4, capsize=3, color=PALETTE[i % len(PALETTE)],
                    label=s.label)  # fmt: skip
    if reference is not None:
        ax.axhline(reference, color="#888888", lw=0.8, ls=":")
    if cores:
        ax.axvline(cores, color="#444444", lw=0.9, ls="--")
        ax.annotate(f"{cores} cores", (cores, 0), xycoords=("data", "axes fraction"), xytext=(4, 6),
                    textcoords="offset points", fontsize=8)  # fmt: skip
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ns = sorted({n for s in series for n in s.n})
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best")
    return fig
