"""Private networks for the runtimes without an engine that makes them (LXC, virtual machines):
a Linux bridge per network, a /24 of its own, and a fixed address per member handed out here.

A network's state (labels, subnet, bridge, addresses given) is a json file, so that whatever a
run made is found and removed even after a crash. Members reach each other by address; no DNS.
Where Docker's br_netfilter is loaded, bridged packets cross iptables' FORWARD chain, whose
policy Docker sets to DROP: one ACCEPT rule per bridge lets its members talk, and goes with it.

A bridge made with a gateway is the network study's "bridge" mode (paper 001: a Linux bridge
with NAT rules): the host takes the first address on it, and traffic from its subnet leaving
by another interface is masqueraded."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import shutil
import subprocess
from pathlib import Path

from interference.runtimes import ovs
from interference.runtimes.base import LOOPBACK

SUBNETS = ipaddress.ip_network("10.231.0.0/16")  # one /24 per network


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def bridge_name(network: str) -> str:
    # Interface names have at most 15 characters.
    return "itf" + hashlib.sha1(network.encode()).hexdigest()[:10]


def _iptables(action: str, bridge: str, nat_subnet: str | None = None) -> None:
    if shutil.which("iptables") is None:
        return
    rules = [["FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT"]]
    if nat_subnet:
        # Out to other networks (another host: the network study's to-remote runs), and the
        # replies back in; FORWARD's policy DROP stops both otherwise.
        rules += [
            ["FORWARD", "-i", bridge, "-j", "ACCEPT"],
            ["FORWARD", "-o", bridge, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"],
            ["POSTROUTING", "-t", "nat", "-s", nat_subnet, "!", "-o", bridge, "-j", "MASQUERADE"],
        ]
    for rule in rules:
        subprocess.run(
            ["iptables", "-w", action, *rule], capture_output=True
        )  # -w: wait for the xtables lock


class Bridges:
    def __init__(self, state_dir: Path):
        self.dir = Path(state_dir) / "networks"

    def _file(self, network: str) -> Path:
        return self.dir / f"{network}.json"

    def exists(self, network: str) -> bool:
        return self._file(network).exists()

    def state(self, network: str) -> dict:
        return json.loads(self._file(network).read_text())

    def _save(self, network: str, state: dict) -> None:
        tmp = self._file(network).with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.rename(self._file(network))

    def create(self, network: str, labels: dict, gateway: bool = False) -> dict:
        """A bridge; with `gateway`, the host is on it (first address) and NATs its traffic."""
        self.dir.mkdir(parents=True, exist_ok=True)
        used = {self.state(p.stem)["subnet"] for p in self.dir.glob("*.json")}
        subnet = next(str(s) for s in SUBNETS.subnets(new_prefix=24) if str(s) not in used)
        bridge = bridge_name(network)
        net = ipaddress.ip_network(subnet)
        gw = str(net.network_address + 1) if gateway else None
        state = {"labels": labels, "bridge": bridge, "subnet": subnet, "members": {}, "gateway": gw}
        self._save(network, state)  # first: a crash after `ip link add` still finds it
        _ip("link", "add", bridge, "type", "bridge")
        if gw:
            _ip("addr", "add", f"{gw}/{net.prefixlen}", "dev", bridge)
        _ip("link", "set", bridge, "up")
        _iptables("-I", bridge, subnet if gw else None)
        return state

    def gateway(self, network: str) -> str:
        return self.state(network)["gateway"]

    def address_for(self, network: str, member: str) -> tuple[str, int, str]:
        """A fixed address for `member` (host part 2, 3, ...): (address, prefix length, bridge)."""
        state = self.state(network)
        net = ipaddress.ip_network(state["subnet"])
        if member not in state["members"]:
            state["members"][member] = str(net.network_address + 2 + len(state["members"]))
            self._save(network, state)
        return state["members"][member], net.prefixlen, state["bridge"]

    def address_of(self, member: str) -> str | None:
        for p in self.dir.glob("*.json") if self.dir.is_dir() else []:
            if member in (members := json.loads(p.read_text())["members"]):
                return members[member]
        return None

    def labelled(self, label: str, value: str) -> list[str]:
        paths = sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []
        return [p.stem for p in paths if json.loads(p.read_text())["labels"].get(label) == value]

    def remove(self, network: str) -> None:
        state = self.state(network)
        _ip("link", "del", state["bridge"], check=False)
        _iptables("-D", state["bridge"], state["subnet"] if state.get("gateway") else None)
        self._file(network).unlink()


class BridgedNetworks:
    """The network methods of a runtime whose private networks are these bridges (LXC, VM): its
    `bridges` attribute; removing a run's things removes its networks after its members. For
    the network study's modes: a bridge of its own per entity ("bridge"), or an OVS port, the
    entity's switch in its `attached` attribute ("ovs")."""

    bridges: Bridges
    attached: dict  # entity name -> ovs.OvsSwitch

    def own_bridge(self, name: str, labels: dict) -> tuple[str, int, str, str]:
        """A bridge for `name` alone with the host on it and NAT: (address, prefix, bridge, gateway)."""
        self.bridges.create(name, labels, gateway=True)
        address, prefix, bridge = self.bridges.address_for(name, name)
        return address, prefix, bridge, self.bridges.gateway(name)

    def entity_address(self, name: str) -> str:
        if name in self.attached:
            return self.attached[name].address_of(name)
        return self.bridges.address_of(name) if self.bridges.exists(name) else LOOPBACK

    def host_address(self, name: str) -> str:
        if name in self.attached:
            return self.attached[name].gateway()
        return self.bridges.gateway(name) if self.bridges.exists(name) else LOOPBACK

    def create_network(self, name: str, labels: dict) -> None:
        self.bridges.create(name, labels)

    def address_of(self, name: str) -> str:
        address = self.bridges.address_of(name)
        if address is None:
            raise RuntimeError(f"{name} is on no private network")
        return address

    def remove_labelled(self, label: str, value: str) -> list[str]:
        removed = super().remove_labelled(label, value)
        for network in self.bridges.labelled(label, value):
            self.bridges.remove(network)
            removed.append(f"network {network}")
        return removed + ovs.remove_labelled(label, value)
