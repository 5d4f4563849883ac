"""Bonnie++ and the page cache: why the disk microservice "improves" in the unlimited cases.

Buffered, Bonnie++'s data set is twice the memory of the Case 1 container (the papers' rule),
so the limited cases (1, 3b) read and rewrite through the disk; a container without a memory
limit (Cases 2, 3a) has the host's page cache, which holds the whole data set: reads too fast
to time (bonnie++ prints +++++) and a rewrite at cache speed. Shown from the data: per case,
the memory the container could use (read back inside it), the share of block-input and seek
samples that were +++++, and the rewrite's IR over the partners."""

from __future__ import annotations

from interference.report.blocks import Block, md
from interference.report.format import esc, num, pct
from interference.studies.pairs.section.data import CASE_NAME, PairsData
from interference.studies.pairs.section.method import _memory

DISK = "B"
UNTIMED = ("block_input", "random_seeks")
UNLIMITED = ("2", "3a")  # no memory limit: the host's page cache
LIMITED_WITH_PARTNER = "3b"  # the same partners, the Case 1 limits
GAIN = 0.10  # an IR above +10 % is a gain; within ±10 % no change


def _span(values: list[float]) -> str:
    lo, hi = num(min(values), 2), num(max(values), 2)
    return lo if lo == hi else f"{lo} to {hi}"


def rewrite_cause(irs: dict[str, list[float]]) -> str:
    """Whether the rewrite's gain without a memory limit is the limit's absence or the partner:
    its IRs in the unlimited Cases 2 and 3a against Case 3b's (the same partners, limited)."""
    free = [v for c in UNLIMITED for v in irs.get(c, [])]
    limited = irs.get(LIMITED_WITH_PARTNER, [])
    if not free:
        return "The rewrite's IR without a memory limit (Cases 2 and 3a) is not in these results."
    if min(free) <= GAIN:
        return (
            f"Here the rewrite's IR in Cases 2 and 3a is {_span(free)}: not a gain above "
            f"{pct(GAIN, 0)} beside every partner, so there is no gain to explain."
        )
    if not limited:
        return (
            f"Its gain in Cases 2 and 3a ({_span(free)}) may be the memory limit's absence or the partner: "
            "which cannot be told, as Case 3b (the same partners, limited) is not in these results."
        )
    if max(abs(v) for v in limited) <= GAIN:
        return (
            f"Its gain in Cases 2 and 3a ({_span(free)}) is the memory limit's absence, not the partner: "
            f"in Case 3b, limited again beside the same partners, its IR is {_span(limited)}."
        )
    return (
        f"Its gain in Cases 2 and 3a ({_span(free)}) is not the limit's absence alone: in Case 3b, limited "
        f"again beside the same partners, its IR is {_span(limited)} too."
    )


class PageCache:
    """Bonnie++ in the unlimited cases: the page cache behind its "gains"."""

    def __init__(self, data: PairsData):
        self.data = data

    def page_cache_blocks(self) -> list[Block]:
        s = self.data.summary[self.data.summary["target"] == DISK]
        if s.empty:
            return []
        sizes = self.data.config.get("sizes", {}).get(DISK, {})
        if sizes.get("direct_io"):
            return [md("**Bonnie++ and the page cache.** Bonnie++ ran its block tests with O_DIRECT "
                       "(`sizes.B.direct_io`): every case measured the disk path, not the page cache.")]  # fmt: skip
        rows, rewrite_irs = [], {}
        for case in [c for c in CASE_NAME if c in set(s["case"])]:
            g = s[s["case"] == case]
            untimed = []
            for metric in UNTIMED:
                m = g[g["metric"] == metric]
                total = m["n"].sum() + m["n_excluded_failed"].sum()
                untimed.append(pct(m["n_excluded_failed"].sum() / total, 0, sign=False) if total else "–")
            ir = self.data.ir[
                (self.data.ir["target"] == DISK)
                & (self.data.ir["case"] == case)
                & (self.data.ir["metric"] == "block_rewrite")
            ]
            rewrite_irs[case] = [float(v) for v in ir["ir"].dropna()]
            ir_text = "baseline" if case == "1" else (
                f"{num(ir['ir'].min(), 2)} to {num(ir['ir'].max(), 2)}" if ir["ir"].notna().any() else "–")  # fmt: skip
            rows.append([CASE_NAME[case], self.disk_memory(case), *untimed, ir_text])
        return [
            md(
                f"**Bonnie++ and the page cache.** Bonnie++'s data set ({esc(sizes.get('file_size_mb', '?'))} MiB) is "
                "twice the Case 1 container's memory, so the limited cases read and rewrite through the disk; a "
                "container without a memory limit has the host's page cache, which holds the whole data set. There "
                "block input and seeks can be too fast to time (bonnie++ prints +++++: no sample) and the rewrite "
                f"can run at cache speed. {rewrite_cause(rewrite_irs)} "
                "`sizes.B.direct_io` (`config/bonnie-direct.yaml`) measures the disk path in every case."
            ),
            self.data.table(
                [
                    "Case",
                    "Memory of B's container",
                    "Block input +++++",
                    "Seeks +++++",
                    "Rewrite IR (over partners)",
                ],
                rows,
                "Per case: the memory limit read back inside Bonnie++'s container, the share of its block-input and "
                "random-seek samples bonnie++ could not time, and the range of its rewrite IR.",
                numeric_from=2,
                group_first=True,
                table_class="rpt-table rpt-small",
            ),
        ]

    def disk_memory(self, case: str) -> str:
        """The memory B's container could use in a case, as read back in it ('host' when unlimited)."""
        r = self.data.runs[self.data.runs["case"] == case] if len(self.data.runs) else self.data.runs
        seen = set()
        for k in (1, 2):
            if f"member{k}" in r:
                for v in r.loc[r[f"member{k}"] == DISK, f"member{k}_read_memory_max"]:
                    m = _memory(v)
                    seen.add("unlimited (the host's)" if m in ("unlimited", "max") else m)
        return ", ".join(sorted(seen)) or "–"
