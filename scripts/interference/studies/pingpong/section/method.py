"""The ping-pong study's method and what differs from paper 003 and why, with whether the
services were the bottleneck (their recorded CPU use) and the cores they shared."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, num, plural
from interference.studies.pingpong import LAYERS, fabric
from interference.studies.pingpong.section.data import HEADROOM, message_size


class Method:
    def method(self) -> list[Block]:
        # The config's protocol: runs.tsv records none of the sizes, durations or concurrency, and
        # its n_iterations counts the tests over all sizes, so the tests per size cannot be told from it.
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
