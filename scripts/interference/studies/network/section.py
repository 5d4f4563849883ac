"""The network study's report section: its method, our Tables II and III beside the paper's, a
figure of every row relative to bare metal's host-to-host (the paper's ratio as a diamond), and
generated verdicts on the paper's findings: host network ≈ bare metal; Linux bridge and OVS alike
at about half the throughput and twice the latency; a VM about half a container on the same
switch; nested children on the host network ≈ bare metal, behind a bridge or OVS slower."""

from __future__ import annotations

import numpy as np

from interference import runtimes
from interference.findings import verdict as rule
from interference.report import environment
from interference.report.blocks import Block, md
from interference.report.figures import PALETTE
from interference.report.figures.network import Ratio, ratio_panels
from interference.report.format import esc, is_num, num
from interference.studies.network import published

MODE_NAMES = {"host": "host network", "bridge": "Linux bridge + NAT", "ovs": "Open vSwitch"}
ENTITY_NAMES = {"host": "host", "vm": "VM", "nested": "child", "container": "container"}
CLOSE = 0.10  # "≈": within ±10 %
HALF = (0.35, 0.65)  # "about half"


def mode_name(mode: str) -> str:
    if "+" in mode:
        parent, child = mode.split("+")
        return f"parent {MODE_NAMES[parent]}, child {MODE_NAMES[child]}"
    return MODE_NAMES.get(mode, mode)


def ends(runtime: str, direction: str) -> str:
    """Client → server, as the paper's row names."""
    entity = ENTITY_NAMES[published.entity_of(runtime)]
    return f"{entity} → host" if direction == "to-host" else f"host → {entity}"


DIRECTIONS = ("to-host", "from-host")


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


class Network:
    def __init__(self, doc):
        self.doc = doc
        self.cfg = doc.study_config("network")
        rel = doc.stats.table("network", "relative", numeric="auto")
        if not rel.empty:  # bare metal first, then the runtimes in their adapters' report order
            rank = {rt: i for i, rt in enumerate(runtimes.in_report_order(set(rel["runtime"])))}
            rel = rel.sort_values(
                ["runtime", "direction", "mode"],
                key=lambda c: c.map(rank).fillna(99) if c.name == "runtime" else c,
                kind="stable",
            )
        self.rel = rel.reset_index(drop=True)

    def _rows(self, nested: bool):
        d = self.rel
        if d.empty:
            return d
        return d[(d["runtime"] == "nested") == nested]

    def method(self) -> list[Block]:
        c = self.cfg
        return [
            md(
                f"Paper 001's Experiment 4: throughput (iperf3's TCP stream, {num(c.get('duration_s'), 0)} s, for "
                "netperf's TCP_STREAM) and round-trip latency (sockperf's TCP ping-pong, for TCP_RR) between a "
                "process on the host and an entity on the same host, "
                f"{num(c.get('iterations'), 0)} tests per run. The host's side is Debian's iperf3 or sockperf run "
                "directly on the host; the entity's side the same package in the entity's image. `to-host`: the "
                'client in the entity (the paper\'s "Container - Host"); `from-host`: the server in it. Network '
                "modes: the host's network (no isolation), a Linux bridge with NAT rules (Docker's docker0, "
                "Podman's bridge, for a VM a bridge with a tap, the host on it and a MASQUERADE rule), and Open "
                "vSwitch with no encapsulation and no NAT (veth pairs into the containers, as the paper did by "
                "hand; the VM's tap as a port). Nested children (Table III) run as clients of the host, the "
                "parent and the child each on the host network or a bridge (the parent also on OVS); a child's "
                "bridge is NATed by its parent. Every figure is relative to bare metal's host-to-host row, as "
                "the paper's table invites; its absolute values are from a 12-core Xeon in 2016."
            ),
            md(
                "Differences from the paper, on purpose or forced: the runs make OVS's switch with its userspace "
                "`netdev` datapath, which needs no openvswitch kernel module (every packet crosses ovs-vswitchd "
                "through a raw socket), far slower than the kernel datapath the paper measured: our OVS rows "
                "measure that datapath. netperf is not installable (non-free), so iperf3 and sockperf stand in; "
                "sockperf keeps one request in flight where the paper ran TCP_RR in burst mode with 256 KB "
                "buffers, so our latencies are lower." + self.vm_sentence()
            ),
        ]

    def vm_acceleration(self) -> tuple[str, str] | None:
        """(kvm or tcg, why) as the `vm` runtime recorded it (environment.json, engines.vm), or None."""
        return environment.vm_acceleration(self.doc.env)

    def vm_sentence(self) -> str:
        """What the `vm` runtime's rows measure, from its recorded acceleration."""
        ran_vm = not self.rel.empty and (self.rel["runtime"] == "vm").any()
        if not ran_vm:
            return ""
        accel = self.vm_acceleration()
        if accel is None:
            return (
                " Whether the `vm` runtime ran under KVM or QEMU's emulation was not recorded, so what its "
                "rows measure cannot be told."
            )
        kind, why = accel
        if kind == "tcg":
            return (
                " The `vm` runtime ran under QEMU's TCG emulation"
                + (f" ({esc(why)})" if why else "")
                + ", so its rows are emulation, not a VM's network overhead."
            )
        return " The `vm` runtime ran under KVM, as the paper's VMs did."

    def _ratios(self, metric: str, rows) -> list[Ratio]:
        colors = {rt: PALETTE[i % len(PALETTE)] for i, rt in enumerate(dict.fromkeys(self.rel["runtime"]))}
        out = []
        for r in rows[rows["metric"] == metric].itertuples(index=False):
            pub = published.relative(published.entity_of(r.runtime), r.direction, r.mode)
            out.append(
                Ratio(
                    f"{r.runtime}: {ends(r.runtime, r.direction)}, {r.mode}",
                    r.ratio,
                    r.ci_low if is_num(r.ci_low) else np.nan,
                    r.ci_high if is_num(r.ci_high) else np.nan,
                    None if pub is None else pub[0 if metric == "throughput" else 1],
                    colors[r.runtime],
                )
            )
        return out

    def figure(self) -> list[Block]:
        if self.rel.empty:
            return [md("No network results (or no bare-metal host-to-host run to relate them to).")]
        ref = self.rel["reference"].iloc[0]
        panels = {
            "throughput (higher: faster)": self._ratios("throughput", self.rel),
            "round-trip latency (lower: faster)": self._ratios("latency", self.rel),
        }
        fig = ratio_panels(panels, f"× {ref}")
        return [
            self.doc.figure(
                fig,
                f"Throughput and latency of every runtime, direction and network mode relative to {esc(ref)} "
                "(runtime/direction/mode; log axis, 95 % bootstrap whiskers); diamonds: paper 001's ratio for "
                "the same row (Tables II and III over their Host - Host row).",
                "Two panels of horizontal bars, throughput and latency ratios per row, with the paper's ratios "
                "as diamonds.",
            )
        ]

    def _table(self, rows, caption: str) -> list[Block]:
        if rows.empty:
            return []
        cells = []
        for (rt, d, m), g in rows.groupby(["runtime", "direction", "mode"], sort=False):
            g = g.set_index("metric")
            pub = published.VALUES.get((published.entity_of(rt), d, m))
            rel = published.relative(published.entity_of(rt), d, m)
            # Table III's layout for nested pairs: the parent's and the child's mode in columns.
            line = (
                [rt, *(MODE_NAMES[x] for x in m.split("+"))] if "+" in m else [rt, ends(rt, d), mode_name(m)]
            )
            for k, (metric, scale, digits) in enumerate((("throughput", 1e-3, 2), ("latency", 1, 1))):
                if metric in g.index:
                    r = g.loc[metric]
                    ci = f" [{num(r.ci_low, 2)}, {num(r.ci_high, 2)}]" if is_num(r.ci_low) else ""
                    line += [
                        f"{num(r['mean'] * scale, digits)} ± {num(r.sd * scale, digits)}",
                        f"{num(r.ratio, 2)}{ci}",
                    ]
                else:
                    line += ["–", "–"]
                line.append(f"{pub[2 * k]} ({num(rel[k], 2)})" if pub else "–")
            cells.append(line)
        nested = all("+" in m for m in rows["mode"])
        cols = ["Runtime", "Parent", "Child"] if nested else ["Runtime", "Client → server", "Mode"]
        cols += ["Gbit/s ± σ", "× host", "Paper Gbit/s (×)", "Latency µs ± σ", "× host", "Paper µs (×)"]
        return [self.doc.table(cols, cells, caption, numeric_from=3)]

    def tables(self) -> list[Block]:
        return self._table(
            self._rows(nested=False),
            "Throughput and latency between an entity and its host (our Table II; results/stats/network/"
            f"relative.tsv), × bare metal's host → host, beside {published.SOURCE}.",
        ) + self._table(
            self._rows(nested=True),
            "Nested children as clients of the host (child → host; our Table III), × bare metal's host → host.",
        )

    # -- verdicts: one line per finding of the paper, the rows it rests on listed ------------
    def _row(self, runtime, direction, mode, metric="throughput"):
        d = self.rel
        hit = d[
            (d["runtime"] == runtime)
            & (d["direction"] == direction)
            & (d["mode"] == mode)
            & (d["metric"] == metric)
        ]
        return hit.iloc[0] if len(hit) else None

    def _ratio(self, runtime, direction, mode, metric="throughput") -> rule.Measure | None:
        """A row's ratio to bare metal's host → host, with its bootstrap CI and samples."""
        r = self._row(runtime, direction, mode, metric)
        if r is None or not is_num(r["ratio"]):
            return None
        low, high = (float(r[c]) if is_num(r.get(c)) else float("nan") for c in ("ci_low", "ci_high"))
        return rule.Measure("", float(r["ratio"]), low, high, int(r["n"]))

    def _over(self, a: tuple, b: tuple, metric="throughput") -> rule.Measure | None:
        """Row a over row b (runtime, direction, mode), with a delta-method CI from their SDs."""
        ra, rb = self._row(*a, metric), self._row(*b, metric)
        if ra is None or rb is None or not rb["mean"]:
            return None
        est = rule.ratio_from_summaries(ra["mean"], ra["sd"], ra["n"], rb["mean"], rb["sd"], rb["n"])
        return rule.Measure("", *est, int(min(ra["n"], rb["n"])))

    def _shares(
        self, mode: str, over: str, metric: str = "throughput", runtimes=None
    ) -> list[tuple[str, float]]:
        """(row, ratio of `mode` to `over`) for each runtime and direction that ran both."""
        out = []
        d = self.rel
        for rt, direction in d[["runtime", "direction"]].drop_duplicates().itertuples(index=False):
            if runtimes is not None and rt not in runtimes:
                continue
            m = self._over((rt, direction, mode), (rt, direction, over), metric)
            if m is not None:
                out.append((f"{rt} {ends(rt, direction)}", m))
        return out

    @staticmethod
    def _finding(
        claim: str, paper: str, items: list[tuple[str, float]], lo: float, hi: float, note: str = ""
    ) -> str:
        """One finding over its rows, each judged by the findings' rule (findings.verdict): its 95 % CI
        inside [lo, hi], outside, or neither (or too few samples)."""
        judged = [(r, m, *rule.judge(m, rule.Band(lo, hi), lambda x: num(x, 2))) for r, m in items]
        values = [m.estimate for _, m in items]
        listed = "; ".join(f"{esc(r)} {num(m.estimate, 2)}" + (f" [{num(m.low, 2)}, {num(m.high, 2)}]" if is_num(m.low) else "")
                           for r, m in items)  # fmt: skip
        held = sum(verdict == rule.REPRODUCED for *_, verdict, _ in judged)
        failed = sum(verdict == rule.NOT_REPRODUCED for *_, verdict, _ in judged)
        open_ = [(r, reason) for r, _, verdict, reason in judged if verdict == rule.INCONCLUSIVE]
        if held == len(items):
            verdict = "holds: every 95 % CI inside"
        elif failed == len(items):
            verdict = "does not hold: every 95 % CI outside"
        else:
            verdict = f"holds for {held} of {len(items)} rows, fails for {failed}"
            if open_:
                verdict += f", cannot be told for {len(open_)} ({esc(open_[0][0])}: {esc(open_[0][1])})"
        return (
            f"- **{claim}** (paper: {paper}): here {num(min(values), 2)}–{num(max(values), 2)} ({listed}); "
            f"{verdict} the range {num(lo, 2)}–{num(hi, 2)}.{note}"
        )

    def noise_sentence(self) -> str:
        """How much bare metal's host → host throughput varied between its tests here (SD / mean)."""
        d = self.rel
        hit = d[
            (d["runtime"] == "host")
            & (d["direction"] == "to-host")
            & (d["mode"] == "host")
            & (d["metric"] == "throughput")
        ]
        if hit.empty or not is_num(hit["sd"].iloc[0]) or not hit["mean"].iloc[0]:
            return ""
        r = hit.iloc[0]
        tests = f" over {num(r['n'], 0)} tests" if is_num(r.get("n")) else ""
        return (
            f" Bare metal's host → host throughput has an SD of {num(100 * r['sd'] / r['mean'], 0)} % of its "
            f"mean{tests} here; see the CIs above."
        )

    def verdicts(self) -> list[Block]:
        d = self.rel
        if d.empty:
            return []
        flat = [rt for rt in dict.fromkeys(d["runtime"]) if rt not in ("host", "nested")]
        lines = []
        hostnet = [(f"{rt} {ends(rt, dr)}", self._ratio(rt, dr, m)) for rt, dr, m in
                   d[d["mode"].isin(["host", "host+host"]) & (d["runtime"] != "host")][["runtime", "direction", "mode"]]
                   .drop_duplicates().itertuples(index=False)]  # fmt: skip
        hostnet = [(r, m) for r, m in hostnet if m is not None]
        if hostnet:
            lines.append(self._finding("Host network ≈ bare metal, throughput", span(paper_ratios(PAPER_PAIRS["host network"]), unit=" ×"),
                                       hostnet, 1 - CLOSE, 1 + CLOSE, self.noise_sentence()))  # fmt: skip
        bridge = self._shares("bridge", "host", runtimes=flat)
        if bridge:
            lines.append(
                self._finding(
                    "Linux bridge ≈ half the host network's throughput",
                    span(paper_ratios(PAPER_PAIRS["bridge"])),
                    bridge,
                    *HALF,
                )
            )
            lat = self._shares("bridge", "host", "latency", runtimes=flat)
            if lat:
                paper_lat = paper_ratios(PAPER_PAIRS["bridge"], 2)
                added = [(m.estimate - 1) * 100 for _, m in lat]
                lines.append(self._finding("Linux bridge ≈ twice the host network's latency", span(paper_lat, 1, " ×"), lat, 1.5, 2.5,
                                           f" Here the bridge adds {span(added, 0)} % to a round trip, in the paper "
                                           f"{span([(v - 1) * 100 for v in paper_lat], 0)} %; sockperf's one request "
                                           "in flight is not netperf's burst mode."))  # fmt: skip
        ovs_rows = self._shares("ovs", "host", runtimes=flat)
        if ovs_rows:
            lines.append(self._finding("Open vSwitch ≈ Linux bridge ≈ half the host network's throughput",
                                       f"{span(paper_ratios(PAPER_PAIRS['ovs']))}, kernel datapath", ovs_rows, *HALF,
                                       " Our OVS is the userspace datapath: every packet crosses "
                                       "ovs-vswitchd, so it is not the switch the paper measured."))  # fmt: skip
        containers = [rt for rt in flat if published.entity_of(rt) == "container"]
        if "vm" in flat and containers:
            vm = []
            for dr, m in (
                d[d["runtime"] == "vm"][["direction", "mode"]].drop_duplicates().itertuples(index=False)
            ):
                over = self._over(("vm", dr, m), (containers[0], dr, m))
                if over is not None:
                    vm.append((f"{ends('vm', dr)} {m}", over))
            if vm:
                accel = self.vm_acceleration()
                note = {
                    None: " Whether the guests were emulated (TCG) was not recorded.",
                    "tcg": " The guest's CPU and NIC are emulated by TCG here.",
                    "kvm": " The guests ran under KVM.",
                }[accel and accel[0]]
                lines.append(self._finding(f"A VM ≈ half a container ({esc(containers[0])}) on the same switch",
                                           span(paper_ratios(PAPER_PAIRS["vm"])), vm, *HALF, note))  # fmt: skip
        if "nested" in set(d["runtime"]) and self._ratio("nested", "to-host", "host+host"):
            nested = [(mode_name(m), self._over(("nested", "to-host", m), ("nested", "to-host", "host+host")))
                      for m in ("host+bridge", "bridge+host", "bridge+bridge") if self._ratio("nested", "to-host", m)]  # fmt: skip
            if nested:
                lines.append(self._finding("Nested: a bridge in the parent or the child ≈ half of both on the host network",
                                           span(paper_ratios(PAPER_PAIRS["nested"])), nested, 0.3, 0.6))  # fmt: skip
        return [md("Verdicts, generated from the table:\n\n" + "\n".join(lines))] if lines else []


def section(doc) -> Network:
    return Network(doc)
