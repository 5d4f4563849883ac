"""The netlink building blocks (host/netlink.py) and the code made of them (runtimes/bridges.py,
runtimes/ovs.py's veth into an entity, the ping-pong study's fabric), on real links, all of them
in network namespaces named p2t-... that the tests make and remove: this process enters one of
its own, so what the code makes in "this machine's" namespace is made there, and nothing of the
machine's is touched. Root only; needs pyroute2."""

from __future__ import annotations

import os
import secrets
import subprocess
import time

import pytest
from interference.host import netlink
from interference.host.netlink import Links, NetlinkError, pid_netns
from interference.runtimes import bridges, ovs
from interference.studies.pingpong import fabric

pytest.importorskip("pyroute2")  # host/netlink.py imports it when it is first used
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="netlink changes need root")

# A server that answers the address it sees the client at; a client that prints the answer.
SERVE = "import socket; s=socket.create_server(('', 28099)); c, a = s.accept(); c.sendall(a[0].encode())"
FETCH = "import socket,sys; print(socket.create_connection((sys.argv[1], 28099), 5).recv(64).decode())"


def netns_exec(name: str) -> list[str]:
    return ["ip", "netns", "exec", name]


def inside(pid: int) -> list[str]:
    return ["nsenter", "-t", str(pid), "-n"]


def seen_as(server: list[str], client: list[str], address: str) -> str:
    """The address a server at `address` sees a TCP client at (server, client: command prefixes
    that put them in their namespaces), or why there was no connection."""
    listening = subprocess.Popen([*server, "python3", "-c", SERVE])
    try:
        for _ in range(50):  # until the server listens
            r = subprocess.run(
                [*client, "python3", "-c", FETCH, address], capture_output=True, text=True, check=False
            )
            if r.stdout.strip():
                break
            time.sleep(0.1)
        return r.stdout.strip() or r.stderr
    finally:
        listening.kill()
        listening.wait()


def names_here() -> list[str]:
    with Links() as links:
        return links.names()


def forward_rules() -> str:
    return subprocess.run(["iptables", "-S", "FORWARD"], check=True, capture_output=True, text=True).stdout


def ip(*argv: str, ns: str | None = None) -> str:
    prefix = ["ip", "netns", "exec", ns] if ns else []
    return subprocess.run([*prefix, "ip", *argv], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def token():
    """A name part of this test's own; every p2t-...<token>... namespace goes at its end."""
    t = secrets.token_hex(2)
    yield t
    for name in netlink.netns_names("p2t-"):
        if t in name:
            netlink.delete_netns(name, missing_ok=True)


@pytest.fixture
def own_netns(token):
    """This process in a namespace of its own (p2t-host-...) for the test, then back."""
    from pyroute2 import netns

    name = f"p2t-host-{token}"
    netlink.add_netns(name)
    netns.pushns(name)
    try:
        yield name
    finally:
        netns.popns()


@pytest.fixture
def entities(token):
    """Processes each in a p2t- namespace of its own with only loopback, as a runtime's entity."""
    procs = []

    def start(host: str) -> int:
        name = f"p2t-ent{host}-{token}"
        netlink.add_netns(name)
        procs.append(subprocess.Popen([*netns_exec(name), "sleep", "120"]))
        deadline = time.time() + 10  # it is in the namespace once `ip netns exec` has run
        while os.stat(pid_netns(procs[-1].pid)).st_ino != os.stat(f"/var/run/netns/{name}").st_ino:
            assert time.time() < deadline
            time.sleep(0.01)
        return procs[-1].pid

    yield start
    for p in procs:
        p.kill()
        p.wait()


def test_namespaces_are_the_ones_ip_netns_lists(token):
    name = f"p2t-ns-{token}"
    netlink.add_netns(name)
    assert name in ip("netns", "list") and netlink.netns_names(f"p2t-ns-{token}") == [name]
    with pytest.raises(NetlinkError, match=f"add network namespace {name}"):
        netlink.add_netns(name)
    assert netlink.delete_netns(name) and name not in ip("netns", "list")
    assert not netlink.delete_netns(name, missing_ok=True)
    with pytest.raises(NetlinkError, match=f"delete network namespace {name}"):
        netlink.delete_netns(name)
    with pytest.raises(NetlinkError, match=name):
        Links(name).__enter__()  # no namespace is made by opening it


def test_links_name_what_failed(own_netns):
    with Links() as links:
        links.add_bridge("p2tbr")
        with pytest.raises(NetlinkError, match="`add bridge p2tbr` failed: File exists"):
            links.add_bridge("p2tbr")
        with pytest.raises(NetlinkError, match="no link p2tnone"):
            links.set("p2tnone", up=True)
        assert links.delete("p2tbr") and not links.delete("p2tbr", missing_ok=True)
        assert links.names() == ["lo"]


def test_bridges_create_and_remove(own_netns, tmp_path, entities):
    nets = bridges.Bridges(tmp_path)
    state = nets.create("p2tnet", {"run": "x"}, gateway=True)
    bridge = state["bridge"]
    assert "bridge" in ip("-d", "link", "show", bridge) and ",UP," in ip("link", "show", bridge)
    assert f"inet {state['gateway']}/24" in ip("addr", "show", bridge)
    assert f"-i {bridge} -o {bridge} -j ACCEPT" in forward_rules()  # in this namespace's iptables
    # The network study's "bridge" mode: an entity on it reaches another network, masqueraded.
    client, server = entities("c"), entities("s")
    address, prefix, _ = nets.address_for("p2tnet", "member")
    with Links() as links:
        links.add_veth("p2tcli", "eth0", peer_netns=pid_netns(client))
        links.set("p2tcli", master=bridge, up=True)
        links.add_veth("p2tsrv", "eth0", peer_netns=pid_netns(server))
        links.add_address("p2tsrv", "10.233.9.1/30")
        links.set("p2tsrv", up=True)
    for pid, cidr, gateway in (
        (client, f"{address}/{prefix}", state["gateway"]),
        (server, "10.233.9.2/30", None),
    ):
        with Links(pid_netns(pid)) as entity:
            entity.add_address("eth0", cidr)
            entity.set("eth0", up=True)
            if gateway:
                entity.default_route(gateway)
    with open("/proc/sys/net/ipv4/ip_forward", "w") as f:  # this namespace's; may start off
        f.write("1")
    assert seen_as(inside(server), inside(client), "10.233.9.2") == "10.233.9.1"
    nets.create("p2tplain", {"run": "x"})  # no gateway: no address
    assert "inet " not in ip("addr", "show", nets.state("p2tplain")["bridge"])
    nets.remove("p2tnet")
    assert bridge not in ip("-o", "link") + forward_rules() and not nets.exists("p2tnet")
    with Links() as links:  # a bridge already gone (a reboot) does not stop its removal
        links.delete(nets.state("p2tplain")["bridge"])
    nets.remove("p2tplain")
    assert names_here() == ["lo", "p2tcli", "p2tsrv"]  # theirs go with the entities


def test_ovs_switch_links(own_netns, tmp_path, monkeypatch, entities):
    """OvsSwitch's own links: the bridge's address, the veth into an entity, their removal; the
    OVS daemons and ovs-vsctl faked (the device ovs-vswitchd would make is a plain bridge)."""
    switch = ovs.OvsSwitch("p2trun", tmp_path)
    real_run = ovs._run
    monkeypatch.setattr(ovs, "missing", list)
    monkeypatch.setattr(ovs, "_run", lambda *a, **k: None if a[0].startswith("ovs") else real_run(*a, **k))

    def vsctl(*args, check=True):
        if args[0] == "add-br":
            with Links() as links:
                links.add_bridge(args[1])

    monkeypatch.setattr(switch, "vsctl", vsctl)
    subnet = switch.ensure()["subnet"]
    assert f"inet {switch.gateway()}/24" in ip("addr", "show", switch.bridge) and subnet.startswith("10.232.")
    assert f"-i {switch.bridge} -j ACCEPT" in forward_rules()
    pid = entities("o")
    address = switch.attach_netns("p2tmember", pid)
    port = switch.state()["ports"]["p2tmember"]["port"]
    assert address == switch.gateway()[:-1] + "2" and "state UP" in ip("link", "show", port)
    shown = subprocess.run(
        [*inside(pid), "sh", "-c", "ip addr show eth0; ip route; ethtool -k eth0"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert f"inet {address}/24" in shown and f"default via {switch.gateway()} dev eth0" in shown
    assert "tx-checksumming: off" in shown
    removed = switch.remove()
    assert f"veth {port} (p2tmember)" in removed and f"ovs bridge {switch.bridge}" in removed
    assert names_here() == ["lo"] and switch.bridge not in forward_rules() and not switch.file.exists()


def test_fabric_builds_its_hosts_and_vxlan_and_removes_them(
    own_netns, token, tmp_path, monkeypatch, entities
):
    monkeypatch.setattr(fabric, "PREFIX", f"p2t-{token}")  # its namespaces p2t-<token>a-<id>, ...
    monkeypatch.setattr(fabric, "STATE_DIR", tmp_path / "state")
    pids = {h: entities(h) for h in fabric.HOSTS}
    with fabric.Fabric("t1", tmp_path, time.time() + 60) as net:
        assert len(fabric.namespaces()) == 3 and fabric.root_links() == [f"p2t-{token}rt1"]
        assert f"inet {fabric.UNDERLAY}.1/24" in ip("addr", "show", f"p2t-{token}rt1")
        assert "master br0 state UP" in ip("link", "show", "to-a", ns=net.ns["n"])
        assert seen_as(netns_exec(net.ns["b"]), netns_exec(net.ns["a"]), net.address("b")) == net.address("a")
        info = net.vxlan()
        assert info["vxlan"] == f"id {fabric.VXLAN_ID}, UDP port {fabric.VXLAN_PORT}"
        vx = ip("-d", "link", "show", "vx0", ns=net.ns["a"])
        assert f"vxlan id 42 remote {net.address('b')} local {net.address('a')} dev eth0" in vx
        assert "master obr0" in vx and "dstport 4789" in vx
        for h, pid in pids.items():
            net.attach_container(h, pid, 28080)
            net.attach_overlay(h, pid)
        a, b = inside(pids["a"]), inside(pids["b"])
        links = subprocess.run(
            [*a, "sh", "-c", "ip addr; ip route"], check=True, capture_output=True, text=True
        )
        assert f"inet {fabric.CONTAINER_NET}.2/24" in links.stdout
        assert f"default via {fabric.CONTAINER_NET}.1 dev eth0" in links.stdout
        assert "eth1@" in links.stdout and "mtu 1400" in links.stdout
        assert seen_as(b, a, net.overlay_address("b")) == net.overlay_address("a")  # over the VXLAN
        assert fabric.leftovers()
    assert fabric.leftovers() == [] and not (tmp_path / "state" / "t1").exists()


def test_fabric_failure_is_a_fabric_error_and_leaves_nothing(own_netns, token, tmp_path, monkeypatch):
    monkeypatch.setattr(fabric, "PREFIX", f"p2t-{token}")
    monkeypatch.setattr(fabric, "STATE_DIR", tmp_path / "state")
    netlink.add_netns(f"p2t-{token}b-t2")  # host b's namespace is taken
    with pytest.raises(fabric.FabricError, match=f"add network namespace p2t-{token}b-t2"):
        fabric.Fabric("t2", tmp_path, time.time() + 60).__enter__()
    assert fabric.leftovers() == []  # closing took the taken one as well, as `ip netns delete` did
    net = fabric.Fabric("t3", tmp_path, time.time() + 60)
    net.__enter__()  # as a run killed with SIGKILL leaves it
    assert len(fabric.remove_all()) == 4 and fabric.leftovers() == []
