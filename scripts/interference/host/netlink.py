"""Links, addresses, routes and network namespaces through netlink (pyroute2), not `ip` commands.

A namespace is named as `ip netns` names it: pyroute2 keeps the names in the same directory
(/var/run/netns), so `ip netns list` and `ip netns exec` see the ones made here and the other
way round. A process's namespace is its /proc/<pid>/ns/net (`pid_netns`). Running a program
inside a namespace is no netlink request: that stays `ip netns exec` or nsenter where it is done.

pyroute2 is imported where it is first needed: its import takes a quarter of a second that most
steps, which only import the runtimes, never use."""

from __future__ import annotations

import errno
import os
from typing import Self


class NetlinkError(RuntimeError):
    """A request that failed: what it was, where, and the kernel's reason."""


def pid_netns(pid: int) -> str:
    """The network namespace process `pid` is in, as `Links` and a veth's peer take it."""
    return f"/proc/{pid}/ns/net"


def add_netns(name: str) -> None:
    """A named network namespace, as `ip netns add` makes it."""
    from pyroute2 import netns

    try:
        netns.create(name)
    except OSError as e:
        raise NetlinkError(f"`add network namespace {name}` failed: {e.strerror or e}") from e


def delete_netns(name: str, missing_ok: bool = False) -> bool:
    """Remove a named network namespace (its links go with it); whether there was one."""
    from pyroute2 import netns

    try:
        netns.remove(name)
    except FileNotFoundError:
        if missing_ok:
            return False
        raise NetlinkError(f"`delete network namespace {name}` failed: there is none") from None
    except OSError as e:
        raise NetlinkError(f"`delete network namespace {name}` failed: {e.strerror or e}") from e
    return True


def netns_names(prefix: str = "") -> list[str]:
    """The named network namespaces (those `ip netns list` shows) whose names start so."""
    from pyroute2 import netns

    return sorted(n for n in netns.listnetns() if n.startswith(prefix))


class Links:
    """The links, addresses and routes of one network namespace, through one netlink socket:
    `with Links(ns) as links`, ns a name `ip netns` knows, a /proc/<pid>/ns/net, or None for the
    namespace this process is in. A failed request raises NetlinkError naming it."""

    def __init__(self, netns: str | None = None):
        self.netns = netns
        self.where = f" in {netns}" if netns else ""

    def __enter__(self) -> Self:
        from pyroute2 import IPRoute

        try:
            # flags=0: a namespace that is not there is an error, not one made anew
            self.ipr = IPRoute(netns=self.netns, flags=0)
        except OSError as e:
            raise NetlinkError(f"`open network namespace {self.netns}` failed: {e.strerror or e}") from e
        return self

    def __exit__(self, *exc) -> None:
        self.ipr.close()

    def _request(self, what: str, method, *args, **kwargs):
        from pyroute2 import NetlinkError as KernelRefused

        try:
            return method(*args, **kwargs)
        except KernelRefused as e:
            raise NetlinkError(f"`{what}`{self.where} failed: {os.strerror(e.code)}") from e

    # -- reading -----------------------------------------------------------------------------
    def index(self, name: str) -> int | None:
        found = self.ipr.link_lookup(ifname=name)
        return found[0] if found else None

    def _index(self, name: str, what: str) -> int:
        index = self.index(name)
        if index is None:
            raise NetlinkError(f"`{what}`{self.where} failed: there is no link {name}")
        return index

    def exists(self, name: str) -> bool:
        return self.index(name) is not None

    def names(self) -> list[str]:
        return [link.get("ifname") for link in self.ipr.link("dump")]

    # -- making ------------------------------------------------------------------------------
    def add_bridge(self, name: str) -> None:
        self._request(f"add bridge {name}", self.ipr.link, "add", ifname=name, kind="bridge")

    def add_veth(self, name: str, peer: str, peer_netns: str | None = None) -> None:
        """A veth pair, its `peer` end made straight in `peer_netns` (a name or a /proc path)."""
        spec = {"ifname": peer} | ({"net_ns_fd": peer_netns} if peer_netns else {})
        what = f"add veth {name} (peer {peer}{' in ' + peer_netns if peer_netns else ''})"
        self._request(what, self.ipr.link, "add", ifname=name, kind="veth", peer=spec)

    def add_vxlan(self, name: str, vni: int, port: int, local: str, remote: str, dev: str) -> None:
        """A unicast VXLAN link to `remote` over `dev`."""
        what = f"add vxlan {name} (id {vni}, {local} -> {remote} over {dev})"
        self._request(
            what, self.ipr.link, "add", ifname=name, kind="vxlan", vxlan_id=vni, vxlan_port=port,
            vxlan_local=local, vxlan_group=remote, vxlan_link=self._index(dev, what),
        )  # fmt: skip

    def add_address(self, name: str, cidr: str) -> None:
        """An address given as "a.b.c.d/prefix"."""
        address, prefix = cidr.split("/")
        what = f"add address {cidr} to {name}"
        self._request(
            what, self.ipr.addr, "add", index=self._index(name, what), address=address, prefixlen=int(prefix)
        )

    def set(self, name: str, *, up: bool = True, master: str | None = None, mtu: int | None = None) -> None:
        """One change of a link, as one `ip link set`: up (the default), a bridge's port, an MTU."""
        what = f"set link {name}" + (f" master {master}" if master else "") + (f" mtu {mtu}" if mtu else "")
        what += " up" if up else ""
        change = {"state": "up"} if up else {}
        if master:
            change["master"] = self._index(master, what)
        if mtu:
            change["mtu"] = mtu
        self._request(what, self.ipr.link, "set", index=self._index(name, what), **change)

    def default_route(self, gateway: str, replace: bool = False) -> None:
        """The default route via `gateway`; `replace`: whatever default route there was goes."""
        command = "replace" if replace else "add"
        what = f"{command} default route via {gateway}"
        self._request(what, self.ipr.route, command, dst="0.0.0.0/0", gateway=gateway)

    # -- removing ----------------------------------------------------------------------------
    def delete(self, name: str, missing_ok: bool = False) -> bool:
        """Remove a link (a veth's peer goes with it); whether there was one."""
        from pyroute2 import NetlinkError as KernelRefused

        what = f"delete link {name}"
        index = self.index(name)
        if index is None:
            if missing_ok:
                return False
            raise NetlinkError(f"`{what}`{self.where} failed: there is no link {name}")
        try:
            self.ipr.link("del", index=index)
        except KernelRefused as e:
            if missing_ok and e.code == errno.ENODEV:
                return False  # gone since the lookup (its veth peer's removal took it)
            raise NetlinkError(f"`{what}`{self.where} failed: {os.strerror(e.code)}") from e
        return True
