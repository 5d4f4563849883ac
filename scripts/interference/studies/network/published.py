"""Paper 001's Tables II and III (seeds/001, Section IV-E): netperf 2.6.0 TCP_STREAM throughput
(Gbit/s) and TCP_RR latency (µs) between client and server on one host (12-core Xeon, Ubuntu
14.04, Docker 1.0.1, Open vSwitch 2.0.2, KVM), 5 repetitions, mean and σ as published; and its
Tables IV and V (Section IV-F): the same tests across two hosts joined by a physical 1 Gbit/s
switch, the server on the other host's bare metal, published in Mbit/s and ms and stored here
in Gbit/s and µs (direction `to-remote`). Transcribed from the paper; its "-" cells are absent.

Keys: (entity, direction, mode). entity: "host" (Host - Host), "container", "vm", or "nested"
(Table III: mode PARENT+CHILD, the child a client of the host, as we run it)."""

SOURCE = "paper 001, Tables II and III (network throughput and latency on a single host)"
REMOTE_LINK = "a physical 1 Gbit/s switch"  # what joined the paper's two hosts (Section IV-F)
REMOTE_SOURCE = f"paper 001, Tables IV and V (the server on a second host, across {REMOTE_LINK})"

# (entity, direction, mode): (throughput Gbit/s, σ, latency µs, σ)
VALUES = {
    ("host", "to-host", "host"): (35.71, 0.32, 102.77, 0.95),
    ("container", "to-host", "host"): (35.13, 0.48, 104.48, 1.45),
    ("container", "to-host", "bridge"): (15.82, 0.36, 231.97, 5.3),
    ("container", "to-host", "ovs"): (16.01, 0.47, 229.37, 6.38),
    ("container", "from-host", "host"): (34.96, 0.63, 105.0, 1.94),
    ("container", "from-host", "bridge"): (15.96, 0.51, 230.17, 7.35),
    ("container", "from-host", "ovs"): (16.86, 0.35, 217.76, 4.63),
    ("vm", "to-host", "bridge"): (8.64, 0.28, 424.92, 14.09),
    ("vm", "to-host", "ovs"): (7.94, 0.69, 465.53, 43.57),
    ("vm", "from-host", "bridge"): (9.24, 0.27, 397.53, 12.08),
    ("vm", "from-host", "ovs"): (8.77, 0.55, 420.14, 27.09),
    ("nested", "to-host", "host+host"): (33.74, 2.3, 109.31, 7.66),
    ("nested", "to-host", "host+bridge"): (16.06, 0.73, 228.90, 10.52),
    ("nested", "to-host", "bridge+host"): (15.56, 0.97, 236.72, 14.72),
    ("nested", "to-host", "bridge+bridge"): (12.53, 0.75, 293.84, 18.45),
    ("nested", "to-host", "ovs+host"): (16.9, 0.44, 217.25, 5.63),
    ("nested", "to-host", "ovs+bridge"): (12.19, 0.57, 301.54, 14.63),
    # Table IV (client - server on the other host's bare metal); Mbit/s / 1000, ms * 1000.
    ("host", "to-remote", "host"): (0.14221, 0.00864, 25970.0, 1700.0),
    ("container", "to-remote", "host"): (0.15792, 0.00106, 23290.0, 150.0),
    ("container", "to-remote", "bridge"): (0.15451, 0.00522, 23830.0, 820.0),
    ("container", "to-remote", "ovs"): (0.15725, 0.00395, 23400.0, 580.0),
    ("vm", "to-remote", "bridge"): (0.13592, 0.00677, 27130.0, 1310.0),
    ("vm", "to-remote", "ovs"): (0.13692, 0.00537, 26500.0, 1230.0),
    # Table V (a nested child, parent privileged, to the remote host).
    ("nested", "to-remote", "host+host"): (0.14898, 0.00533, 24720.0, 920.0),
    ("nested", "to-remote", "host+bridge"): (0.14739, 0.00478, 24980.0, 830.0),
    ("nested", "to-remote", "bridge+host"): (0.14729, 0.00485, 25010.0, 810.0),
    ("nested", "to-remote", "bridge+bridge"): (0.14831, 0.00479, 24830.0, 810.0),
    ("nested", "to-remote", "ovs+host"): (0.14775, 0.00575, 24930.0, 970.0),
    ("nested", "to-remote", "ovs+bridge"): (0.14786, 0.00499, 24910.0, 850.0),
}
REFERENCE = ("host", "to-host", "host")
REMOTE_REFERENCE = ("host", "to-remote", "host")


def reference_of(direction: str) -> tuple[str, str, str]:
    """The row a published value is relative to: Host - Host of its table."""
    return REMOTE_REFERENCE if direction == "to-remote" else REFERENCE


# Their findings, checked by the section's verdicts: host network ≈ bare metal; bridge and OVS
# alike, ≈ half the throughput and ≈ twice the latency; a VM ≈ half a container on the same switch.
BRIDGE_SHARE = 0.5
VM_OVER_CONTAINER = 0.5


def entity_of(runtime: str) -> str:
    """Which of the paper's entities a runtime's rows compare with."""
    return {"baremetal": "host", "vm": "vm", "nested": "nested"}.get(runtime, "container")


def relative(entity: str, direction: str, mode: str) -> tuple[float, float] | None:
    """The published (throughput, latency) relative to the paper's Host - Host row."""
    v = VALUES.get((entity, direction, mode))
    if v is None:
        return None
    ref = VALUES[reference_of(direction)]
    return v[0] / ref[0], v[2] / ref[2]
