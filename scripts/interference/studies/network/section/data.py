"""The network study's rows for its section (results/stats/network/relative.tsv, bare metal
first, then the runtimes in report order), the recorded VM acceleration, and the names of a row's
parts: its network mode and its client → server."""

from __future__ import annotations

from interference import runtimes
from interference.stores.stats_tables import vm_acceleration
from interference.studies.network import published

MODE_NAMES = {"host": "host network", "bridge": "Linux bridge + NAT", "ovs": "Open vSwitch"}
ENTITY_NAMES = {"host": "host", "vm": "VM", "nested": "child", "container": "container"}


def mode_name(mode: str) -> str:
    if "+" in mode:
        parent, child = mode.split("+")
        return f"parent {MODE_NAMES[parent]}, child {MODE_NAMES[child]}"
    return MODE_NAMES.get(mode, mode)


def ends(runtime: str, direction: str) -> str:
    """Client → server, as the paper's row names."""
    entity = ENTITY_NAMES[published.entity_of(runtime)]
    return {
        "to-host": f"{entity} → host",
        "from-host": f"host → {entity}",
        "to-remote": f"{entity} → remote host",
    }[direction]


DIRECTIONS = ("to-host", "from-host")


class NetworkData:
    """The section's data: the study's config and relative.tsv's rows."""

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
        # What ran (the tests each run recorded), for the method's counts.
        self.runs = doc.stats.table("network", "runs", numeric=("n_iterations", "repetition"))

    def _rows(self, nested: bool, remote: bool = False):
        d = self.rel
        if d.empty:
            return d
        return d[((d["runtime"] == "nested") == nested) & ((d["direction"] == "to-remote") == remote)]

    def vm_acceleration(self) -> tuple[str, str] | None:
        """(kvm or tcg, why) as the `vm` runtime recorded it (environment.json, engines.vm), or None."""
        return vm_acceleration(self.doc.env)
