"""The network study's verdicts on the paper's findings, one line per finding with the rows it
rests on, each row judged by the findings' rule (findings.verdict): host network ≈ bare metal;
Linux bridge and OVS alike at about half the throughput and twice the latency; a VM about half a
container on the same switch; nested children behind a bridge or OVS slower."""

from __future__ import annotations

from interference.findings import verdict as rule
from interference.report.blocks import Block, md
from interference.report.format import esc, is_num, num
from interference.studies.network import published
from interference.studies.network.section.data import ends, mode_name
from interference.studies.network.section.paper_ratios import PAPER_PAIRS, paper_ratios, span

CLOSE = 0.10  # "≈": within ±10 %
HALF = (0.35, 0.65)  # "about half"


class Verdicts:
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
