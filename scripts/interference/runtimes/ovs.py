"""Open vSwitch bridges for the network study's "ovs" mode (paper 001, Tables II and III).

One switch per run: its own ovsdb-server and ovs-vswitchd (Debian's openvswitch-switch, started
directly: no systemd here), one bridge with the host's address on it, no encapsulation and no NAT
(the paper: "OVS configured only for routing packets"). The kernel here has no openvswitch module,
so the bridge uses OVS's userspace `netdev` datapath: every packet crosses ovs-vswitchd, and the
figures measure that datapath, not the kernel one the paper had.

Entities join as the paper did it by hand for Docker: a veth pair, one end a port of the bridge,
the other moved into the entity's network namespace (or a VM's tap as the port). The userspace
datapath does not fill in checksums a sender left to the NIC, so the entity's end sends with
checksum offload off.

The host routes between the switch and its other networks (a server on another host: the
network study's to-remote runs): FORWARD accepts the bridge's packets both ways, which Docker's
FORWARD policy DROP would stop. Still no NAT: a remote host reaches an entity's address through
its route to this host (the local cluster's edge node: its default route); on a cluster whose
nodes have no such route, add one for SUBNETS via the run's node.

A switch's state (labels, subnet, ports, daemon pids) is a json file written before anything
is made, so that whatever a run made is found and removed even after a crash."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from interference.core.labels import RUN_LABEL
from interference.host.packages import HostPackage

# An OVS bridge: its daemons and tools; ethtool turns off the entity's checksum offload.
PACKAGES = (
    HostPackage("openvswitch-switch", "ovs-vswitchd", "Open vSwitch (its daemons are started per run)"),
    HostPackage("ethtool", "ethtool", "checksum offload off on OVS veths"),
)

SUBNETS = ipaddress.ip_network("10.232.0.0/16")  # one /24 per switch
SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
STATE_DIR = Path("/var/lib/interference/ovs")


class OvsUnavailable(RuntimeError):
    pass


def missing() -> list[str]:
    """What this machine lacks for an OVS bridge (empty: nothing)."""
    tools = ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ethtool", "nsenter")
    lack = [f"the `{t}` command" for t in tools if shutil.which(t) is None]
    if not SCHEMA.exists():
        lack.append(str(SCHEMA))
    if not Path("/dev/net/tun").exists():
        lack.append("/dev/net/tun (the bridge's own port is a tap in the userspace datapath)")
    return lack


def _forward(action: str, bridge: str) -> None:
    """FORWARD rules accepting the bridge's routed packets, in and out ("-I" adds, "-D" removes)."""
    if shutil.which("iptables") is None:
        return  # nothing filters forwarded packets here: no rule is needed
    for side in ("-i", "-o"):
        subprocess.run(
            ["iptables", "-w", action, "FORWARD", side, bridge, "-j", "ACCEPT"], capture_output=True
        )


def _port_only(ifname: str) -> None:
    """A port's host end answers no ARP for this machine's addresses: otherwise the kernel may
    answer first for the gateway with the port's own MAC, and the entity's routed packets enter
    the host through the port, beside the switch (and FORWARD drops them)."""
    Path(f"/proc/sys/net/ipv4/conf/{ifname}/arp_ignore").write_text("1")


def _name(prefix: str, key: str) -> str:
    return prefix + hashlib.sha1(key.encode()).hexdigest()[:10]  # at most 15 characters


def _run(*argv: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


class OvsSwitch:
    """The OVS bridge of one run (its run label's value)."""

    def __init__(self, run_id: str, state_dir: Path = STATE_DIR):
        self.run_id = run_id
        self.dir = Path(state_dir)
        self.file = self.dir / f"{run_id}.json"
        self.rundir = self.dir / run_id
        self.bridge = _name("ito", run_id)

    def _env(self) -> dict:
        d = str(self.rundir)
        return os.environ | {"OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}

    def vsctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return _run("ovs-vsctl", f"--db=unix:{self.rundir}/db.sock", "--timeout=20", *args, check=check)

    def state(self) -> dict:
        return json.loads(self.file.read_text())

    def _save(self, state: dict) -> None:
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.rename(self.file)

    def ensure(self) -> dict:
        """The switch, started and its bridge made unless it already is."""
        if self.file.exists():
            return self.state()
        if lack := missing():
            raise OvsUnavailable(
                "an Open vSwitch bridge needs " + ", ".join(lack) + " (Debian: apt-get install "
                "openvswitch-switch ethtool util-linux; scripts/ensure-engine.sh installs them)"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        used = {json.loads(p.read_text())["subnet"] for p in self.dir.glob("*.json")}
        subnet = next(str(s) for s in SUBNETS.subnets(new_prefix=24) if str(s) not in used)
        state = {"labels": {RUN_LABEL: self.run_id}, "bridge": self.bridge, "subnet": subnet, "ports": {}}
        self._save(state)  # first: a crash after this still finds what follows
        self.rundir.mkdir(parents=True, exist_ok=True)
        env, d = self._env(), self.rundir
        _run("ovsdb-tool", "create", f"{d}/conf.db", str(SCHEMA), env=env)
        _run(
            "ovsdb-server", f"{d}/conf.db", f"--remote=punix:{d}/db.sock", f"--pidfile={d}/ovsdb-server.pid",
            "--detach", f"--log-file={d}/ovsdb-server.log", env=env,
        )  # fmt: skip
        self.vsctl("--no-wait", "init")
        _run(
            "ovs-vswitchd", f"unix:{d}/db.sock", f"--pidfile={d}/ovs-vswitchd.pid", "--detach",
            f"--log-file={d}/ovs-vswitchd.log", env=env,
        )  # fmt: skip
        # No kernel module here: the userspace datapath (its own port is a tap).
        self.vsctl("add-br", self.bridge, "--", "set", "bridge", self.bridge, "datapath_type=netdev")
        deadline = time.time() + 20  # ovs-vswitchd makes the bridge's tap after add-br returns
        while _run("ip", "link", "show", self.bridge, check=False).returncode != 0:
            if time.time() > deadline:
                raise RuntimeError(f"ovs-vswitchd made no device {self.bridge}; see {d}/ovs-vswitchd.log")
            time.sleep(0.05)
        net = ipaddress.ip_network(subnet)
        _run("ip", "addr", "add", f"{net.network_address + 1}/{net.prefixlen}", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        _forward("-I", self.bridge)
        return state

    def gateway(self) -> str:
        return str(ipaddress.ip_network(self.state()["subnet"]).network_address + 1)

    def _address_for(self, member: str, port: str) -> tuple[str, int]:
        state = self.state()
        net = ipaddress.ip_network(state["subnet"])
        address = str(net.network_address + 2 + len(state["ports"]))
        state["ports"][member] = {"port": port, "address": address}
        self._save(state)
        return address, net.prefixlen

    def address_of(self, member: str) -> str:
        return self.state()["ports"][member]["address"]

    def attach_netns(self, member: str, pid: int) -> str:
        """A veth from the bridge into the network namespace of process `pid`, as its eth0 with
        an address and the bridge as default route; the address."""
        self.ensure()
        port = _name("ivo", member)
        address, prefix = self._address_for(member, port)
        inside = _name("ivi", member)
        _run("ip", "link", "add", port, "type", "veth", "peer", "name", inside)
        _run("ip", "link", "set", inside, "netns", str(pid))
        _port_only(port)
        _run("ip", "link", "set", port, "up")
        self.vsctl("add-port", self.bridge, port)
        ns = ["nsenter", "--target", str(pid), "--net"]
        _run(*ns, "ip", "link", "set", inside, "name", "eth0")
        _run(*ns, "ip", "addr", "add", f"{address}/{prefix}", "dev", "eth0")
        _run(*ns, "ip", "link", "set", "eth0", "up")
        _run(*ns, "ip", "link", "set", "lo", "up")
        _run(*ns, "ip", "route", "replace", "default", "via", self.gateway())
        _run(*ns, "ethtool", "-K", "eth0", "tx", "off")  # see the module's docstring
        return address

    def attach_port(self, member: str, ifname: str) -> tuple[str, int]:
        """An existing interface (a VM's tap) as a port; the (address, prefix) its guest takes."""
        self.ensure()
        address, prefix = self._address_for(member, ifname)
        _port_only(ifname)
        _run("ip", "link", "set", ifname, "up")
        self.vsctl("add-port", self.bridge, ifname)
        return address, prefix

    def remove(self) -> list[str]:
        """Everything of the switch: its veths, its bridge, its daemons, its files."""
        if not self.file.exists():
            return []
        state = self.state()
        removed = []
        for member, p in state["ports"].items():
            if (
                p["port"].startswith("ivo")
                and _run("ip", "link", "del", p["port"], check=False).returncode == 0
            ):
                removed.append(f"veth {p['port']} ({member})")
        if (self.rundir / "db.sock").exists():
            self.vsctl("--if-exists", "del-br", self.bridge, check=False)
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pidfile = self.rundir / f"{daemon}.pid"
            try:
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
                removed.append(f"{daemon} of {self.bridge}")
            except (OSError, ValueError):
                pass
        _run("ip", "link", "del", self.bridge, check=False)  # if the daemon died before del-br
        _forward("-D", self.bridge)
        shutil.rmtree(self.rundir, ignore_errors=True)
        self.file.unlink()
        removed.append(f"ovs bridge {self.bridge}")
        return removed


def version() -> str:
    return _run("ovs-vswitchd", "--version").stdout.splitlines()[0]


def remove_labelled(label: str, value: str, state_dir: Path = STATE_DIR) -> list[str]:
    """The switches of the runs with this label (a run has at most one)."""
    removed = []
    for path in sorted(Path(state_dir).glob("*.json")) if Path(state_dir).is_dir() else []:
        if json.loads(path.read_text())["labels"].get(label) == value:
            removed += OvsSwitch(path.stem, state_dir).remove()
    return removed


def switches_left(state_dir: Path = STATE_DIR) -> list[str]:
    """Switches or OVS daemons of ours still there (for the tests)."""
    left = [p.stem for p in Path(state_dir).glob("*.json")] if Path(state_dir).is_dir() else []
    out = _run("ip", "-o", "link", "show", check=False).stdout
    left += [
        line.split(":")[1].strip().split("@")[0]
        for line in out.splitlines()
        if ": ito" in line or ": ivo" in line
    ]
    if shutil.which("iptables"):
        rules = _run("iptables", "-w", "-S", "FORWARD", check=False).stdout.splitlines()
        left += [r for r in rules if " ito" in r]
    procs = _run("pgrep", "-a", "-f", f"{STATE_DIR}/", check=False).stdout.split("\n")
    return left + [p for p in procs if p.strip()]
