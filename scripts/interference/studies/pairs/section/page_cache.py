"""Bonnie++ with and without a memory limit: what the runs measured of its "gains" in the
unlimited cases.

Buffered, Bonnie++'s data set is twice the memory of the Case 1 container (the papers' rule). A
container without a memory limit (Cases 2, 3a) may hold it in the host's page cache; whether it
did is not measured by buffered runs (O_DIRECT runs, `sizes.B.direct_io`, would). Shown from the
data only: per case, the memory the container could use (read back inside it), the share of
block-input and seek samples bonnie++ could not time (+++++) with and without a limit, and the
rewrite's IR over the partners against Case 3b's (the same partners, limited)."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, num, pct
from interference.studies.pairs.section.data import CASE_NAME, PairsData
from interference.studies.pairs.section.method_tables import _memory

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


def untimed_contrast(counts: dict[str, tuple[int, int]]) -> str:
    """The share of untimed samples (+++++) without a memory limit against with one, from each
    case's (untimed, all) counts of block input and seeks."""

    def share(cases) -> float | None:
        untimed, total = (sum(counts.get(c, (0, 0))[i] for c in cases) for i in (0, 1))
        return untimed / total if total else None

    free, limited = share(UNLIMITED), share(("1", LIMITED_WITH_PARTNER))
    if free is None or limited is None:
        return ""
    return (
        f"Bonnie++ could not time (+++++: no sample) {pct(free, 0, sign=False)} of its block-input and seek "
        f"samples without a memory limit (Cases 2 and 3a) and {pct(limited, 0, sign=False)} with one "
        "(Cases 1 and 3b). "
    )


class PageCache:
    """Bonnie++ in the unlimited cases: the page cache behind its "gains"."""

    def __init__(self, data: PairsData):
        self.data = data

    def page_cache_blocks(self) -> list[Block]:
        s = self.data.summary[self.data.summary["target"] == DISK]
        if s.empty:
            return []
        sizes = self.disk_sizes()
        if sizes.get("direct_io") == {"True"}:
            return [md("**Bonnie++ and the page cache.** Bonnie++ ran its block tests with O_DIRECT "
                       "(`sizes.B.direct_io`): every case measured the disk path, not the page cache.")]  # fmt: skip
        rows, rewrite_irs, counts = [], {}, {}
        for case in [c for c in CASE_NAME if c in set(s["case"])]:
            g = s[s["case"] == case]
            untimed = []
            for metric in UNTIMED:
                m = g[g["metric"] == metric]
                total = m["n"].sum() + m["n_excluded_failed"].sum()
                untimed.append(pct(m["n_excluded_failed"].sum() / total, 0, sign=False) if total else "–")
            m = g[g["metric"].isin(UNTIMED)]
            counts[case] = (
                int(m["n_excluded_failed"].sum()),
                int(m["n"].sum() + m["n_excluded_failed"].sum()),
            )
            ir = self.data.ir[
                (self.data.ir["target"] == DISK)
                & (self.data.ir["case"] == case)
                & (self.data.ir["metric"] == "block_rewrite")
            ]
            rewrite_irs[case] = [float(v) for v in ir["ir"].dropna()]
            ir_text = "baseline" if case == "1" else (
                f"{num(ir['ir'].min(), 2)} to {num(ir['ir'].max(), 2)}" if ir["ir"].notna().any() else "–")  # fmt: skip
            rows.append([CASE_NAME[case], self.disk_memory(case), *untimed, ir_text])
        data_mb = " or ".join(sorted(sizes.get("file_size_mb", {"?"})))
        return [
            md(
                f"**Bonnie++ and the page cache.** Bonnie++'s data set ({esc(data_mb)} MiB) is "
                "twice the Case 1 container's memory (the papers' rule); without a memory limit the host's page "
                f"cache may hold it. {untimed_contrast(counts)}{rewrite_cause(rewrite_irs)} Whether the page cache "
                "is the cause is not measured by these buffered runs: O_DIRECT runs (`sizes.B.direct_io`, "
                "`config/bonnie-direct.yaml`) measure the disk path in every case."
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

    def disk_sizes(self) -> dict[str, set[str]]:
        """B's workload sizes as its runs recorded them (run_members.tsv sizes, 'file_size_mb=2048,
        direct_io=False'): each size's values over the runs, so the text says what ran."""
        m = self.data.members
        seen: dict[str, set[str]] = {}
        for text in m.loc[m["microservice"] == DISK, "sizes"]:
            for part in filter(None, str(text).split(", ")):
                key, _, value = part.partition("=")
                seen.setdefault(key, set()).add(value)
        return seen

    def disk_memory(self, case: str) -> str:
        """The memory B's container could use in a case, as read back in it ('host' when unlimited)."""
        m = self.data.members
        seen = set()
        for v in m.loc[(m["microservice"] == DISK) & (m["case"] == case), "read_memory_max"]:
            memory = _memory(v)
            seen.add("unlimited (the host's)" if memory in ("unlimited", "max") else memory)
        return ", ".join(sorted(seen)) or "–"
