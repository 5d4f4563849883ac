"""The ping-pong study's verdicts on paper 003's findings: each stated ratio judged against our
ratios' CIs by the findings' rule (findings.verdict), a kernel overlay against a userspace one,
and whether the services were the bottleneck."""

from __future__ import annotations

from interference.findings import verdict as rule
from interference.report.blocks import Block, md
from interference.report.format import esc, num
from interference.studies.pingpong import published
from interference.studies.pingpong.section.data import HEADROOM, message_size

TOLERANCE = 0.10  # a published ratio "holds" within ±0.10


class Verdicts:
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
