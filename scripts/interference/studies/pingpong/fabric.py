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
router was such a userspace router), with or without encryption."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

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
    argv = ["ip", "netns", "exec", ns, *argv] if ns else argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise FabricError(f"`{' '.join(argv)}` failed: {r.stderr.strip()}")
    return r.stdout


def missing(overlays: set[str]) -> list[str]:
    """What this machine lacks to make the hosts and these overlays ("vxlan", "tinc"): a tool, a
    kernel feature (tried in a throwaway network namespace) or a device."""
    lack = [f"the `{t}` command" for t in ("ip", "iptables", "nsenter", "unshare") if not shutil.which(t)]
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
    for what, probe in probes.items():
        if subprocess.run(["unshare", "--net", "sh", "-c", probe], capture_output=True).returncode != 0:
            lack.append(what)
    return lack


def namespaces() -> list[str]:
    return [ln.split()[0] for ln in _run(["ip", "netns", "list"]).splitlines() if ln.startswith(PREFIX)]


def root_links() -> list[str]:
    out = _run(["ip", "-o", "link", "show"])
    return [
        ln.split(": ")[1].split("@")[0] for ln in out.splitlines() if ln.split(": ")[1].startswith(PREFIX)
    ]


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
        _run(["ip", "netns", "delete", ns], check=False)
    for link in root_links():
        _run(["ip", "link", "delete", link], check=False)
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
        net = self.ns["n"]
        for ns in self.ns.values():
            _run(["ip", "netns", "add", ns])
            _run(["ip", "link", "set", "lo", "up"], ns)
        _run(["ip", "link", "add", "br0", "type", "bridge"], net)
        _run(["ip", "link", "set", "br0", "up"], net)
        root_end = f"{PREFIX}r{self.id}"
        _run(["ip", "link", "add", root_end, "type", "veth", "peer", "name", "root", "netns", net])
        _run(["ip", "addr", "add", f"{UNDERLAY}.1/24", "dev", root_end])
        _run(["ip", "link", "set", root_end, "up"])
        _run(["ip", "link", "set", "root", "master", "br0", "up"], net)
        for host in HOSTS:
            ns = self.ns[host]
            _run(
                ["ip", "link", "add", f"to-{host}", "type", "veth", "peer", "name", "eth0", "netns", ns], net
            )
            _run(["ip", "link", "set", f"to-{host}", "master", "br0", "up"], net)
            _run(["ip", "addr", "add", f"{self.address(host)}/24", "dev", "eth0"], ns)
            _run(["ip", "link", "set", "eth0", "up"], ns)
            _run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], ns)

    # -- containers ----------------------------------------------------------------------
    def _veth_into(self, host: str, pid: int, host_end: str, inner: str, address: str, mtu: int) -> None:
        ns = self.ns[host]
        _run(["ip", "link", "add", host_end, "type", "veth", "peer", "name", inner, "netns", str(pid)], ns)
        inside = ["nsenter", "-t", str(pid), "-n"]
        _run([*inside, "ip", "addr", "add", address, "dev", inner])
        _run([*inside, "ip", "link", "set", inner, "mtu", str(mtu), "up"])

    def attach_container(self, host: str, pid: int, port: int) -> None:
        """Wire the entity whose network namespace `pid` is in into the host, its `port`
        published on the host's address: Docker's bridge network, made in the host."""
        ns = self.ns[host]
        _run(["ip", "link", "add", "cbr0", "type", "bridge"], ns)
        _run(["ip", "addr", "add", f"{CONTAINER_NET}.1/24", "dev", "cbr0"], ns)
        _run(["ip", "link", "set", "cbr0", "up"], ns)
        self._veth_into(host, pid, "cveth", "eth0", f"{CONTAINER_NET}.2/24", 1500)
        _run(["ip", "link", "set", "cveth", "master", "cbr0", "up"], ns)
        _run(["nsenter", "-t", str(pid), "-n", "ip", "route", "add", "default", "via", f"{CONTAINER_NET}.1"])
        nat = ["iptables", "-w", "-t", "nat", "-A"]
        _run([*nat, "POSTROUTING", "-s", f"{CONTAINER_NET}.0/24", "!", "-o", "cbr0", "-j", "MASQUERADE"], ns)
        dnat = ["-d", self.address(host), "-p", "tcp", "--dport", str(port), "-j", "DNAT"]
        _run([*nat, "PREROUTING", *dnat, "--to-destination", f"{CONTAINER_NET}.2:{port}"], ns)

    def attach_overlay(self, host: str, pid: int) -> None:
        """Give the entity a second interface on the host's overlay bridge (made by an overlay)."""
        self._veth_into(host, pid, "oveth", "eth1", f"{self.overlay_address(host)}/24", OVERLAY_MTU)
        _run(["ip", "link", "set", "oveth", "master", "obr0", "up"], self.ns[host])

    # -- overlays ------------------------------------------------------------------------
    def _overlay_bridge(self, host: str) -> None:
        _run(["ip", "link", "add", "obr0", "type", "bridge"], self.ns[host])
        _run(["ip", "link", "set", "obr0", "up"], self.ns[host])

    def vxlan(self) -> dict:
        """One VXLAN link per host to the other's address, on the host's overlay bridge."""
        for host in HOSTS:
            ns, peer = self.ns[host], next(h for h in HOSTS if h != host)
            self._overlay_bridge(host)
            _run(
                ["ip", "link", "add", "vx0", "type", "vxlan", "id", str(VXLAN_ID), "dstport", str(VXLAN_PORT)]
                + ["local", self.address(host), "remote", self.address(peer), "dev", "eth0"],
                ns,
            )
            _run(["ip", "link", "set", "vx0", "master", "obr0", "up"], ns)
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
            # The daemon keeps its own copy of the log's descriptor.
            with open(self.outdir / f"tinc-{host}.log", "w") as log:
                self.daemons.append(
                    subprocess.Popen(
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
            _run(["ip", "netns", "delete", ns], check=False)
        _run(["ip", "link", "delete", f"{PREFIX}r{self.id}"], check=False)
        shutil.rmtree(self.state, ignore_errors=True)
