"""The ping-pong study's report section: its method and what differs from paper 003 and why; a
figure of trans(m) per layer and the ratios of the paper's Figure 3; tables of the rates, the
ratios with CIs, Table I's %RSD beside the paper's and the services' CPU use per test (their
headroom); and generated verdicts on the paper's findings."""

from __future__ import annotations

from interference.findings import verdict as rule
from interference.report.blocks import Block, md
from interference.report.figures import PALETTE
from interference.report.figures.by_size import Panel, Series, size_panels
from interference.report.format import esc, is_num, num, plural
from interference.studies.pingpong import LAYERS, fabric, published
from interference.studies.pingpong.statistics import BARE_METAL, RATE

COLORS = {layer: PALETTE[i] for i, layer in enumerate(LAYERS)}
SYMBOL = {"reference": "□", "container": "○", "overlay": "△", "overlay-userspace": "△", "encrypted": "∇"}
TOLERANCE = 0.10  # a published ratio "holds" within ±0.10
HEADROOM = 0.9  # a service below 0.9 of its one thread's core was waiting, not computing


def message_size(m) -> str:
    """A message size in decimal units, as the paper writes them (10 B, 100 kB, 1 MB)."""
    m = int(m)
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if m >= scale:
            return f"{m / scale:g}\u00a0{unit}"
    return f"{m}\u00a0B"


class PingPong:
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

    def method(self) -> list[Block]:
        c = self.cfg
        sizes = ", ".join(message_size(m) for m in c.get("message_sizes", []))
        return [
            md(
                "Paper 003's experiments: ApacheBench requests *ping*, which relays each request to *pong*, "
                "which answers with a message of m bytes; trans(m) is ApacheBench's transfer rate (KiB/s "
                f"received, headers included). Message sizes {sizes}; {num(c.get('iterations'), 0)} tests of "
                f"{num(c.get('duration_s'), 0)} s per size and layer, the sizes interleaved within each round; "
                f"{num(c.get('concurrency'), 0)} request(s) in flight, HTTP keep-alive (ping keeps its connection "
                "to pong). The paper's hosts were AWS VMs; here they are two network namespaces made for each run "
                "on this machine and joined by a Linux bridge (the data centre's network); ApacheBench runs in "
                "the machine's own namespace (the paper's siege host). Layers: "
                + "; ".join(f"`{k}` — {v}" for k, v in LAYERS.items())
                + ". A container is wired into its host as Docker's default bridge does it (a veth to a bridge "
                "of the host, masquerade out, its port published by a DNAT rule), made by the run in the host's "
                "namespace because each simulated host has no engine of its own."
            ),
            md(
                "Differences from the paper, forced or on purpose: the paper's software-defined network was "
                "Weave's first version, a userspace router that captured the containers' frames and sent them "
                "over UDP, encrypted on demand. Weave is not in Debian; two "
                "overlays stand in: the kernel's VXLAN (what Weave's later *fast datapath* and flannel use) and "
                f"tinc ({fabric.TINC_CIPHER} + {fabric.TINC_DIGEST} or no cipher), a userspace daemon carrying "
                "Ethernet frames over UDP as the 2015 Weave router did. The paper's SDVN rows compare with "
                "`overlay-userspace`. The encrypted layer is tinc's, a userspace cipher as Weave's was (the "
                "study does not use the kernel's IPsec ESP or WireGuard). The paper's Dart services are replaced "
                "by ours in C "
                f"(`containers/httppingpong`): {self.bottleneck_clause()}. Every layer shares "
                f"{self.cores_phrase()} with the load generator and the overlay daemons, as the paper's "
                "single-core VMs shared theirs with the Weave router."
            ),
        ]

    def peak_cpu(self) -> float | None:
        """The most CPU (cores) ping or pong used in any test (its mean over a size's tests)."""
        if self.sum.empty:
            return None
        cpu = self.sum[self.sum["metric"].isin(["ping_cpu", "pong_cpu"])]["mean"].dropna()
        return float(cpu.max()) if len(cpu) else None

    def bottleneck_clause(self) -> str:
        """Whether the services were the bottleneck, from their recorded CPU use."""
        peak = self.peak_cpu()
        if peak is None:
            return "whether they are the bottleneck cannot be told, as no CPU use of theirs was recorded"
        if peak < HEADROOM:
            return (
                f"the table of CPU use below shows they are not the bottleneck (neither used more than "
                f"{num(peak, 2)} of its one core)"
            )
        return (
            f"the table of CPU use below shows they may be the bottleneck (one used {num(peak, 2)} of its "
            "one core)"
        )

    def cores_phrase(self) -> str:
        """The machine's cores as recorded in environment.json (its hosts' `cores`)."""
        hosts = self.doc.env.get("hosts", {})
        cores = [h.get("cores") for h in hosts.values()]
        if len(cores) == 1 and isinstance(cores[0], int):
            return f"this machine's {plural(cores[0], 'core')}"
        if cores and all(isinstance(c, int) for c in cores):
            return "its host's cores (" + ", ".join(f"{esc(h)}: {c}" for h, c in zip(hosts, cores)) + ")"
        return "the machine's cores (their number was not recorded)"

    # -- figure --------------------------------------------------------------------------------
    def figure(self) -> list[Block]:
        if self.sum.empty:
            return [md("No ping-pong results.")]
        absolute = [
            Series(f"{rt}: {layer}", list(g["message_bytes"]), list(g["mean"]), color=COLORS[layer],
                   dashed=layer == "loopback")
            for (rt, layer), g in ((k, self._series(RATE)[k]) for k in self._ordered(self._series(RATE)))
        ]  # fmt: skip
        panels = [Panel("trans(m), absolute (paper's Fig. 2)", "transfer rate (KiB/s)", absolute, log_y=True)]
        for fig_id, title in (("3a", "relative to the reference (Fig. 3a)"), ("3b", "overlay's and encryption's own cost (Fig. 3b)")):  # fmt: skip
            rows = self.rel[self.rel["figure"] == fig_id] if not self.rel.empty else self.rel
            series, points = [], []
            for (rt, layer, base), g in rows.groupby(["runtime", "layer", "baseline"], sort=False):
                g = g.sort_values("message_bytes")
                series.append(Series(f"{layer} / {base}" + ("" if rt == BARE_METAL else f" ({rt})"),
                                     list(g["message_bytes"]), list(g["ratio"]), list(g["ci_low"]),
                                     list(g["ci_high"]), COLORS[layer]))  # fmt: skip
                pub = published.FINDINGS.get((layer, base))
                if pub:
                    small = [m for m in g["message_bytes"] if m < published.SMALL_LARGE_SPLIT]
                    large = [m for m in g["message_bytes"] if m >= published.SMALL_LARGE_SPLIT]
                    points += [(m, pub[0], COLORS[layer]) for m in small[-1:]]
                    points += [(m, pub[1], COLORS[layer]) for m in large[-1:]]
            if series:
                panels.append(Panel(title, "ratio of transfer rates", series, ratio=True, published=points))
        fig = size_panels(panels, "paper 003 (its text)")
        return [
            self.doc.figure(
                fig,
                "Transfer rate trans(m) per layer (left; mean of the tests, log axes), and "
                "the ratios of paper 003's Figure 3 (bands: 95 % bootstrap CI); diamonds: the ratios the paper "
                "states for small and for large messages, drawn at our largest size on each side of 100 kB.",
                "Line charts of transfer rate and of rate ratios against message size, one line per layer.",
            )
        ]

    # -- tables ----------------------------------------------------------------------------------
    def rate_table(self) -> list[Block]:
        series = self._series(RATE)
        if not series:
            return []
        keys = self._ordered(series)
        sizes = sorted({m for g in series.values() for m in g["message_bytes"]})
        cells = []
        for m in sizes:
            line = [message_size(m)]
            for k in keys:
                r = series[k][series[k]["message_bytes"] == m]
                line.append(f"{num(r['mean'].iloc[0], 0)} ± {num(r['sd'].iloc[0], 0)}" if len(r) else "–")
            cells.append(line)
        cols = ["m"] + [f"{layer} ({rt}) {SYMBOL.get(layer, '')}".strip() for rt, layer in keys]
        return [
            self.doc.table(
                cols,
                cells,
                "trans(m) in KiB/s, mean ± SD of the tests (results/stats/pingpong/summary.tsv).",
                numeric_from=1,
            )
        ]

    def ratio_table(self) -> list[Block]:
        if self.rel.empty:
            return []
        sizes = sorted(set(self.rel["message_bytes"]))
        cells = []
        for (fig_id, layer, base, rt), g in self.rel.groupby(
            ["figure", "layer", "baseline", "runtime"], sort=False
        ):
            by_size = {r.message_bytes: r for r in g.itertuples(index=False)}
            line = [f"{layer} / {base} ({rt})"]
            for m in sizes:
                r = by_size.get(m)
                ci = (
                    f" [{num(r.ci_low, 2)}, {num(r.ci_high, 2)}]"
                    if r is not None and is_num(r.ci_low)
                    else ""
                )
                line.append(f"{num(r.ratio, 2)}{ci}" if r is not None else "–")
            pub = published.FINDINGS.get((layer, base))
            cells.append([*line, f"{num(pub[0], 2)} / {num(pub[1], 2)}" if pub else "–"])
        return [
            self.doc.table(
                ["Ratio (runtime)", *(message_size(m) for m in sizes), "Paper"],
                cells,
                "Transfer rates relative to another layer at the same m, with 95 % bootstrap CIs "
                "(results/stats/pingpong/relative.tsv); the paper's values as its text states them for small "
                "(< 100 kB) / large messages.",
                numeric_from=1,
            )
        ]

    def rsd_table(self) -> list[Block]:
        if self.rsd.empty:
            return []
        cells = []
        ours = lambda r: [r.layer, num(r.data_gb, 1), num(r.min_rsd, 1), num(r.avg_rsd, 1), num(r.max_rsd, 1)]  # noqa: E731
        for name, (gb, lo, avg, hi) in published.TABLE_I.items():
            rows = [
                r for r in self.rsd.itertuples(index=False) if r.layer == published.TABLE_I_LAYER.get(name)
            ]
            for r in rows or [None]:
                mine = [f"{r.layer} ({r.runtime})", *ours(r)[1:]] if r else ["–"] * 5
                cells.append([name, *mine, f"{gb}", num(lo, 1), num(avg, 1), num(hi, 1)])
        for r in self.rsd.itertuples(index=False):
            if r.layer not in published.TABLE_I_LAYER.values():
                cells.append(["–", f"{r.layer} ({r.runtime})", *ours(r)[1:], "–", "–", "–", "–"])
        return [
            self.doc.table(
                [
                    "Paper's experiment",
                    "Our layer",
                    "GB",
                    "min %RSD",
                    "avg",
                    "max",
                    "Paper GB",
                    "min",
                    "avg",
                    "max",
                ],
                cells,
                "%RSD of the transfer rate over a message size's tests, min/avg/max over the sizes (our Table I, "
                f"results/stats/pingpong/rsd.tsv) beside {published.SOURCE}.",
                numeric_from=2,
            )
        ]

    def headroom_table(self) -> list[Block]:
        cpu = {k: self.sum[self.sum["metric"] == f"{k}_cpu"] for k in ("ping", "pong", "ab")}
        if cpu["ping"].empty:
            return []
        peak = {k: d.groupby(["runtime", "layer"])["mean"].max() for k, d in cpu.items()}
        cells = [
            [layer, rt, *(num(peak[k].get((rt, layer)), 2) for k in cpu)]
            for rt, layer in self._ordered(peak["ping"].index)
        ]
        return [
            self.doc.table(
                ["Layer", "Runtime", "ping (cores)", "pong (cores)", "ab (cores)"],
                cells,
                "The services' headroom: CPU time each process used during a test over the test's length, the "
                "largest mean over the message sizes (results/stats/pingpong/summary.tsv, metrics *_cpu). Each "
                "serves a connection on one thread, so 1 core is its limit: below it, it was waiting for the "
                "network, not computing.",
                numeric_from=2,
            )
        ]

    def tables(self) -> list[Block]:
        return self.rate_table() + self.ratio_table() + self.rsd_table() + self.headroom_table()

    # -- verdicts ----------------------------------------------------------------------------------
    def _ratios(self, layer: str, base: str, large: bool) -> list[tuple[str, float]]:
        d = (
            self.rel[(self.rel["layer"] == layer) & (self.rel["baseline"] == base)]
            if not self.rel.empty
            else self.rel
        )
        d = d[(d["message_bytes"] >= published.SMALL_LARGE_SPLIT) == large]
        return [
            (f"{message_size(r.message_bytes)} ({r.runtime})", r.ratio) for r in d.itertuples(index=False)
        ]

    def _all(self, layer: str, base: str) -> list[float]:
        return [v for large in (False, True) for _, v in self._ratios(layer, base, large)]

    def _judge(self, layer: str, base: str, large: bool, paper: float) -> str:
        """The paper's ratio ± TOLERANCE against each size's 95 % CI, by the findings' rule
        (findings.verdict): holds where every CI lies inside, fails where every one lies outside,
        otherwise (or with too few tests) says what it can and why."""
        d = self.rel[(self.rel["layer"] == layer) & (self.rel["baseline"] == base)]
        d = d[(d["message_bytes"] >= published.SMALL_LARGE_SPLIT) == large]
        band = rule.Band(paper - TOLERANCE, paper + TOLERANCE)
        judged = [
            (message_size(r.message_bytes), *rule.judge(rule.Measure("", r.ratio, r.ci_low, r.ci_high, int(r.n)), band,
                                                   lambda x: num(x, 2)))
            for r in d.itertuples(index=False)
        ]  # fmt: skip
        held = sum(verdict == rule.REPRODUCED for _, verdict, _ in judged)
        failed = sum(verdict == rule.NOT_REPRODUCED for _, verdict, _ in judged)
        if held == len(judged):
            return "holds: every 95 % CI inside"
        if failed == len(judged):
            return "does not hold: every 95 % CI outside"
        out = f"holds at {held} of {len(judged)} sizes, fails at {failed}"
        open_ = [(size, reason) for size, verdict, reason in judged if verdict == rule.INCONCLUSIVE]
        if open_:
            out += f", cannot be told at {len(open_)} ({esc(open_[0][0])}: {esc(open_[0][1])})"
        return out

    def verdicts(self) -> list[Block]:
        lines = []
        for (layer, base), (small, large, words) in published.FINDINGS.items():
            for is_large, paper in ((False, small), (True, large)):
                items = self._ratios(layer, base, is_large)
                if not items:
                    continue
                verdict = self._judge(layer, base, is_large, paper)
                side = "≥ 100 kB" if is_large else "< 100 kB"
                listed = "; ".join(f"{esc(k)} {num(v, 2)}" for k, v in items)
                lines.append(
                    f"- **{layer} / {base}, m {side}** (paper: {num(paper, 2)} — {esc(words)}): here {listed}; "
                    f"{verdict} (± {num(TOLERANCE, 2)})."
                )
        vx, user = self._all("overlay", "container"), self._all("overlay-userspace", "container")
        if vx:
            line = (
                "- **A kernel overlay instead of a userspace router** (not in the paper): VXLAN keeps "
                f"{num(min(vx), 2)}–{num(max(vx), 2)} of the containers' rate"
            )
            if user:
                line += f", the userspace overlay {num(min(user), 2)}–{num(max(user), 2)}"
                if min(vx) > max(user):
                    line += ": most of the paper's SDVN loss is the userspace datapath, not the overlay"
            lines.append(line + ".")
        ceiling = self._all("reference", "loopback")
        peak = self.peak_cpu()
        if ceiling and peak is not None:
            lines.append(
                f"- **{'The services are not the bottleneck' if peak < HEADROOM else 'The services may be the bottleneck'}**: "
                f"on loopback (no hosts, no layers) they move {num(1 / max(ceiling), 2)}–{num(1 / min(ceiling), 2)} × "
                f"the reference's rate, and neither used more than {num(peak, 2)} of its one core in any test."
            )  # fmt: skip
        return [md("Verdicts, generated from the tables:\n\n" + "\n".join(lines))] if lines else []


def section(doc) -> PingPong:
    return PingPong(doc)
