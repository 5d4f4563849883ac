"""The paper's own figure for each finding, as ratios of its transcribed cells (Tables II and
III), and how the verdicts write a range of ratios."""

from __future__ import annotations

from interference.report.format import num
from interference.studies.network import published
from interference.studies.network.section.data import DIRECTIONS


def paper_ratios(pairs, k: int = 0) -> list[float]:
    """Ratios of transcribed cells (Tables II and III): VALUES[a][k] / VALUES[b][k] for each pair
    (k 0: throughput, 2: latency); pairs with a cell the paper left out ("-") are skipped."""
    v = published.VALUES
    return [v[a][k] / v[b][k] for a, b in pairs if a in v and b in v]


def span(values: list[float], digits: int = 2, unit: str = "") -> str:
    """min–max of values (one value when they agree at `digits`), e.g. "0.50–0.58"."""
    lo, hi = num(min(values), digits), num(max(values), digits)
    return (lo if lo == hi else f"{lo}–{hi}") + unit


# The paper's own figure for each finding, as ratios of its transcribed cells.
PAPER_PAIRS = {
    "host network": [(("container", d, "host"), published.REFERENCE) for d in DIRECTIONS]
    + [(("nested", "to-host", "host+host"), published.REFERENCE)],
    "bridge": [(("container", d, "bridge"), ("container", d, "host")) for d in DIRECTIONS],
    "ovs": [(("container", d, "ovs"), ("container", d, "host")) for d in DIRECTIONS],
    "vm": [(("vm", d, m), ("container", d, m)) for d in DIRECTIONS for m in ("bridge", "ovs")],
    "nested": [
        (("nested", "to-host", m), ("nested", "to-host", "host+host"))
        for m in ("host+bridge", "bridge+host", "bridge+bridge")
    ],
}
