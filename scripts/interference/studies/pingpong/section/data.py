"""The ping-pong study's tables for its section (results/stats/pingpong/: summary, relative,
rsd; each runtime named by its host when there are several), a layer's colour and symbol, how a
message size is written, and the services' CPU use (their headroom)."""

from __future__ import annotations

from interference.rendering.kit.figures import PALETTE
from interference.studies.pingpong import LAYERS

COLORS = {layer: PALETTE[i] for i, layer in enumerate(LAYERS)}
SYMBOL = {"reference": "□", "container": "○", "overlay": "△", "overlay-userspace": "△", "encrypted": "∇"}
HEADROOM = 0.9  # a service below 0.9 of its one thread's core was waiting, not computing


def message_size(m) -> str:
    """A message size in decimal units, as the paper writes them (10 B, 100 kB, 1 MB)."""
    m = int(m)
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if m >= scale:
            return f"{m / scale:g}\u00a0{unit}"
    return f"{m}\u00a0B"


class PingPongData:
    """The section's data: the study's config and its statistics tables."""

    def __init__(self, doc):
        self.doc = doc
        self.cfg = doc.study_config("pingpong")
        self.sum = doc.stats.table("pingpong", "summary", numeric="auto")
        self.rel = doc.stats.table("pingpong", "relative", numeric="auto")
        self.rsd = doc.stats.table("pingpong", "rsd", numeric="auto")
        if not self.sum.empty and self.sum["host"].nunique() > 1:
            # Several hosts (results imported from another machine): each row names its host.
            for d, cols in (
                (self.sum, ["runtime"]),
                (self.rel, ["runtime", "baseline_runtime"]),
                (self.rsd, ["runtime"]),
            ):
                for c in cols:
                    d[c] = d["host"].astype(str) + "/" + d[c].astype(str)

    def _series(self, metric: str):
        """(runtime, layer) -> the summary rows of one metric, by message size."""
        d = self.sum[self.sum["metric"] == metric]
        return {k: g.sort_values("message_bytes") for k, g in d.groupby(["runtime", "layer"], sort=False)}

    def _ordered(self, keys):
        return sorted(keys, key=lambda k: (list(LAYERS).index(k[1]), k[0]))

    def peak_cpu(self) -> float | None:
        """The most CPU (cores) ping or pong used in any test (its mean over a size's tests)."""
        if self.sum.empty:
            return None
        cpu = self.sum[self.sum["metric"].isin(["ping_cpu", "pong_cpu"])]["mean"].dropna()
        return float(cpu.max()) if len(cpu) else None
