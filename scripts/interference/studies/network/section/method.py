"""The network study's method: what the runs measure and how, what differs from paper 001,
and what the `vm` runtime's rows measure (its recorded acceleration)."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, num, recorded
from interference.studies.network import published


class Method:
    def method(self) -> list[Block]:
        # The test's duration is the config's (runs.tsv does not record it); the count is the runs'.
        c = self.cfg
        return [
            md(
                f"Paper 001's Experiment 4: throughput (iperf3's TCP stream, {num(c.get('duration_s'), 0)} s, for "
                "netperf's TCP_STREAM) and round-trip latency (sockperf's TCP ping-pong, for TCP_RR) between a "
                "process on the host and an entity on the same host, "
                f"{recorded(self.runs.get('n_iterations', [])) or 'an unrecorded number of'} tests per run "
                "(results/stats/network/runs.tsv). The host's side is Debian's iperf3 or sockperf run "
                "directly on the host; the entity's side the same package in the entity's image. `to-host`: the "
                'client in the entity (the paper\'s "Container - Host"); `from-host`: the server in it. Network '
                "modes: the host's network (no isolation), a Linux bridge with NAT rules (Docker's docker0, "
                "Podman's bridge, for a VM a bridge with a tap, the host on it and a MASQUERADE rule), and Open "
                "vSwitch with no encapsulation and no NAT (veth pairs into the containers, as the paper did by "
                "hand; the VM's tap as a port). Nested children (Table III) run as clients of the host, the "
                "parent and the child each on the host network or a bridge (the parent also on OVS); a child's "
                "bridge is NATed by its parent. Every figure is relative to bare metal's host-to-host row, as "
                "the paper's table invites; its absolute values are from a 12-core Xeon in 2016."
                + self.remote_sentence()
            ),
            md(
                "Differences from the paper, on purpose or forced: the runs make OVS's switch with its userspace "
                "`netdev` datapath, which needs no openvswitch kernel module (every packet crosses ovs-vswitchd "
                "through a raw socket), where the paper measured the kernel datapath: our OVS rows measure the "
                "userspace one, and how the two datapaths compare is not measured here. netperf is not "
                "installable (non-free), so iperf3 and sockperf stand in; sockperf keeps one request in flight "
                "where the paper ran TCP_RR in burst mode with 256 KB buffers, so our absolute latencies are "
                "not the paper's quantity; the ratios to bare metal are compared." + self.vm_sentence()
            ),
        ]

    def remote_sentence(self) -> str:
        """Experiment 5 (Tables IV and V), when these results have to-remote rows: where the server
        ran, as the runs recorded it, and what joined the hosts."""
        if self.rel.empty or not (self.rel["direction"] == "to-remote").any():
            return ""
        remote = self.rel[self.rel["direction"] == "to-remote"]
        return (
            f" Experiment 5 (Tables IV and V): `to-remote`, the client in the entity on "
            f"{esc(', '.join(sorted(set(remote['host']))))} and the server on the bare metal of "
            f"{esc(self.remote_host())}, started there as a Slurm job for each run; relative to bare metal's "
            f"host-to-remote-host row. The paper's hosts were joined by {published.REMOTE_LINK}, which was "
            "its bottleneck; ours by the network between the two nodes (recorded addresses in each run's "
            "meta.json)."
        )

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
