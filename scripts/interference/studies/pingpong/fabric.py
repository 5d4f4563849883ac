"""The two simulated hosts of a ping-pong run and the layers between them, made on this machine
with network namespaces for one run and removed after it.

  this machine's namespace: the load generator (ApacheBench), UNDERLAY.1
      | veth
  network namespace "n" (the data centre's network): a Linux bridge
      | veth                                   | veth
  host "a" (namespace): UNDERLAY.2             host "b" (namespace): UNDERLAY.3
    ping                                         pong

A process of the reference layer runs in its host's namespace. A container (layer `container`)
is an entity of the run's runtime with only loopback, wired into its host as Docker's default
bridge does it: a veth to a bridge of the host (CONTAINER_NET.1, the container .2), masquerade
out, and its port published on the host's address (DNAT). The overlays give both containers a
second interface on one layer-2 segment spanning the hosts (OVERLAY_NET), as Weave does:
`vxlan`, the kernel's VXLAN between the hosts' addresses (Weave's fast datapath, flannel), or
`tinc`, a userspace daemon per host carrying the Ethernet frames in UDP (the paper's 2015 Weave
router was such a userspace router), with or without encryption.

Namespaces, links, addresses and routes are made by netlink (host/netlink.py). Commands remain
for what is no netlink request: iptables and sysctl run in a host's namespace by `ip netns exec`,
as tincd does, and the probes of `missing`."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from interference.host import netlink
from interference.host.netlink import pid_netns

PREFIX = "pp"  # every namespace and link here starts so; a run's carry its id
UNDERLAY = "10.235.0"
CONTAINER_NET = "172.30.0"
OVERLAY_NET = "10.236.0"
OVERLAY_MTU = 1400  # room for VXLAN's 50 bytes and tinc's UDP encapsulation under 1500
HOSTS = {"a": 2, "b": 3}  # the host's last byte on the underlay and its container's on the overlay
VXLAN_ID, VXLAN_PORT, TINC_PORT = 42, 4789, 655
STATE_DIR = Path("/var/lib/interference/pingpong")  # tinc's keys and configs, per run
# tinc's cipher and digest when encrypting (OpenSSL names; tinc 1.0's default is Blowfish).
TINC_CIPHER, TINC_DIGEST = "aes-256-cbc", "sha256"


class FabricError(RuntimeError):
    pass


def _run(argv: list[str], ns: str | None = None, check: bool = True) -> str:
    """A command, run in namespace `ns` if given (`ip netns exec`: starting a program is no netlink
    request; links and namespaces go by `_links`)."""
    argv = ["ip", "netns", "exec", ns, *argv] if ns else argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise FabricError(f"`{' '.join(argv)}` failed: {r.stderr.strip()}")
    return r.stdout


@contextmanager
def _links(ns: str | None = None) -> Iterator[netlink.Links]:
    """The links of namespace `ns` (a name, a process's /proc/<pid>/ns/net, None: this machine's);
    a failed netlink request in the `with` block as a FabricError naming it."""
    try:
        with netlink.Links(ns) as links:
            yield links
    except netlink.NetlinkError as e:
        raise FabricError(str(e)) from e


def missing(overlays: set[str]) -> list[str]:
    """What this machine lacks to make the hosts and these overlays ("vxlan", "tinc"): a tool, a
    kernel feature (tried in a throwaway network namespace) or a device."""
    lack = [f"the `{t}` command" for t in ("ip", "iptables", "unshare") if not shutil.which(t)]
    if not shutil.which("ab"):
        lack.append("ApacheBench (`ab`, Debian's apache2-utils) on the host")
    if lack:
        return lack
    probes = {"bridges and veth pairs": "ip link add x0 type bridge && ip link add x1 type veth peer name x2"}
    if "vxlan" in overlays:
        probes["the kernel's VXLAN (module vxlan)"] = f"ip link add x3 type vxlan id 1 dstport {VXLAN_PORT}"
    if "tinc" in overlays:
        if not shutil.which("tincd"):
            lack.append("tinc (`tincd`, Debian's tinc) on the host")
        probes["TAP devices (/dev/net/tun, module tun)"] = "ip tuntap add dev x4 mode tap"
    # Commands: each probe runs in a namespace of its own that goes with its shell, even if this
    # process is killed; pyroute2 reaches only a named namespace or one a process holds open.
    for what, probe in probes.items():
        if subprocess.run(["unshare", "--net", "sh", "-c", probe], capture_output=True).returncode != 0:
            lack.append(what)
    return lack


def namespaces() -> list[str]:
    return netlink.netns_names(PREFIX)


def root_links() -> list[str]:
    with _links() as links:
        return [name for name in links.names() if name.startswith(PREFIX)]


def leftovers() -> list[str]:
    """Namespaces, links and tinc daemons of ping-pong runs that still exist."""
    daemons = subprocess.run(["pgrep", "-f", f"tincd -c {STATE_DIR}"], capture_output=True, text=True)
    return (
        [f"netns {n}" for n in namespaces()]
        + [f"link {n}" for n in root_links()]
        + [f"tincd {p}" for p in daemons.stdout.split()]
    )


def remove_all() -> list[str]:
    """Remove every run's namespaces, links and daemons (a run killed with SIGKILL leaves them;
    called under the measurement lock, when no other run can be using them)."""
    found = leftovers()
    subprocess.run(["pkill", "-KILL", "-f", f"tincd -c {STATE_DIR}"], capture_output=True)
    for ns in namespaces():
        netlink.delete_netns(ns, missing_ok=True)
    with _links() as links:
        for link in root_links():
            links.delete(link, missing_ok=True)
    shutil.rmtree(STATE_DIR, ignore_errors=True)
    return found


class Fabric:
    """The hosts of one run (`with Fabric(...) as f`): made on entering, removed on leaving."""

    def __init__(self, run_id: str, outdir: Path, deadline: float):
        self.id = run_id[:8]
        self.outdir = outdir
        self.deadline = deadline
        self.ns = {h: f"{PREFIX}{h}-{self.id}" for h in (*HOSTS, "n")}
        self.state = STATE_DIR / self.id
        self.daemons: list[subprocess.Popen] = []

    @staticmethod
    def address(host: str) -> str:
        """The host's address on the underlay."""
        return f"{UNDERLAY}.{HOSTS[host]}"

    @staticmethod
    def overlay_address(host: str) -> str:
        """The address of the host's container on the overlay."""
        return f"{OVERLAY_NET}.{HOSTS[host]}"

    def __enter__(self) -> Fabric:
        try:
            self._underlay()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _underlay(self) -> None:
        net, root_end = self.ns["n"], f"{PREFIX}r{self.id}"
        with _links() as root:
            for ns in self.ns.values():
                netlink.add_netns(ns)
                with _links(ns) as links:
                    links.set("lo", up=True)
            root.add_veth(root_end, "root", peer_netns=net)
            root.add_address(root_end, f"{UNDERLAY}.1/24")
            root.set(root_end, up=True)
        with _links(net) as links:
            links.add_bridge("br0")
            links.set("br0", up=True)
            links.set("root", master="br0", up=True)
            for host in HOSTS:
                links.add_veth(f"to-{host}", "eth0", peer_netns=self.ns[host])
                links.set(f"to-{host}", master="br0", up=True)
        for host in HOSTS:
            with _links(self.ns[host]) as links:
                links.add_address("eth0", f"{self.address(host)}/24")
                links.set("eth0", up=True)
            _run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], self.ns[host])  # no netlink setting

    # -- containers ----------------------------------------------------------------------
    def _veth_into(self, host: str, pid: int, host_end: str, inner: str, address: str, mtu: int) -> None:
        with _links(self.ns[host]) as links:
            links.add_veth(host_end, inner, peer_netns=pid_netns(pid))
        with _links(pid_netns(pid)) as inside:
            inside.add_address(inner, address)
            inside.set(inner, mtu=mtu, up=True)

    def attach_container(self, host: str, pid: int, port: int) -> None:
        """Wire the entity whose network namespace `pid` is in into the host, its `port`
        published on the host's address: Docker's bridge network, made in the host."""
        ns = self.ns[host]
        with _links(ns) as links:
            links.add_bridge("cbr0")
            links.add_address("cbr0", f"{CONTAINER_NET}.1/24")
            links.set("cbr0", up=True)
        self._veth_into(host, pid, "cveth", "eth0", f"{CONTAINER_NET}.2/24", 1500)
        with _links(ns) as links:
            links.set("cveth", master="cbr0", up=True)
        with _links(pid_netns(pid)) as inside:
            inside.default_route(f"{CONTAINER_NET}.1")
        nat = ["iptables", "-w", "-t", "nat", "-A"]  # commands: pyroute2 makes no iptables rules
        _run([*nat, "POSTROUTING", "-s", f"{CONTAINER_NET}.0/24", "!", "-o", "cbr0", "-j", "MASQUERADE"], ns)
        dnat = ["-d", self.address(host), "-p", "tcp", "--dport", str(port), "-j", "DNAT"]
        _run([*nat, "PREROUTING", *dnat, "--to-destination", f"{CONTAINER_NET}.2:{port}"], ns)

    def attach_overlay(self, host: str, pid: int) -> None:
        """Give the entity a second interface on the host's overlay bridge (made by an overlay)."""
        self._veth_into(host, pid, "oveth", "eth1", f"{self.overlay_address(host)}/24", OVERLAY_MTU)
        with _links(self.ns[host]) as links:
            links.set("oveth", master="obr0", up=True)

    # -- overlays ------------------------------------------------------------------------
    def _overlay_bridge(self, host: str) -> None:
        with _links(self.ns[host]) as links:
            links.add_bridge("obr0")
            links.set("obr0", up=True)

    def vxlan(self) -> dict:
        """One VXLAN link per host to the other's address, on the host's overlay bridge."""
        for host in HOSTS:
            peer = next(h for h in HOSTS if h != host)
            self._overlay_bridge(host)
            with _links(self.ns[host]) as links:
                links.add_vxlan("vx0", VXLAN_ID, VXLAN_PORT, self.address(host), self.address(peer), "eth0")
                links.set("vx0", master="obr0", up=True)
        return {"overlay_daemon": None, "vxlan": f"id {VXLAN_ID}, UDP port {VXLAN_PORT}", "cipher": "none"}

    def tinc(self, encrypted: bool) -> dict:
        """A tincd per host (switch mode: Ethernet over UDP between the hosts), its TAP device on
        the host's overlay bridge; the version and cipher, for the record."""
        cipher, digest = (TINC_CIPHER, TINC_DIGEST) if encrypted else ("none", "none")
        for host in HOSTS:
            conf = self.state / host
            (conf / "hosts").mkdir(parents=True)
            lines = [f"Name = {host}", "Mode = switch", "DeviceType = tap", "Interface = tnc0"]
            lines += ["AddressFamily = ipv4"]
            lines += [f"ConnectTo = {h}" for h in HOSTS if h < host]  # b connects to a
            (conf / "tinc.conf").write_text("\n".join(lines) + "\n")
            # A script tincd runs itself once its TAP device is there, so a command.
            (conf / "tinc-up").write_text("#!/bin/sh\nip link set $INTERFACE master obr0 up\n")
            (conf / "tinc-up").chmod(0o755)
            host_file = f"Address = {self.address(host)}\nPort = {TINC_PORT}\n"
            host_file += f"Cipher = {cipher}\nDigest = {digest}\n"  # host variables: tincd reads its own too
            (conf / "hosts" / host).write_text(host_file)
            _run(["tincd", "-c", str(conf), "-K", "2048"], check=True)
            self._overlay_bridge(host)
        for host in HOSTS:  # each knows the other's public key
            for other in HOSTS:
                if other != host:
                    shutil.copy(self.state / other / "hosts" / other, self.state / host / "hosts" / other)
        lifetime = str(max(1, int(self.deadline - time.time())))
        for host in HOSTS:
            log = open(self.outdir / f"tinc-{host}.log", "w")
            self.daemons.append(
                subprocess.Popen(  # a program in the host's namespace: `ip netns exec`, not netlink
                    ["ip", "netns", "exec", self.ns[host], "timeout", lifetime]
                    + [
                        "tincd",
                        "-c",
                        str(self.state / host),
                        "-D",
                        "-d1",
                        "--pidfile",
                        str(self.state / f"{host}.pid"),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            log.close()
        version = _run(["tincd", "--version"]).splitlines()[0]
        return {"overlay_daemon": version, "cipher": cipher, "digest": digest}

    def close(self) -> None:
        for p in self.daemons:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for ns in self.ns.values():
            netlink.delete_netns(ns, missing_ok=True)
        with _links() as links:
            links.delete(f"{PREFIX}r{self.id}", missing_ok=True)
        shutil.rmtree(self.state, ignore_errors=True)
