"""LXC (`lxc`): system containers from Debian's lxc, started with `lxc-execute`, which runs the
command under LXC's own init and returns its exit code.

The image is the Docker image's root file system (runtimes/rootfs.py), shared read-only as the
lower layer of an overlay: each container writes to an upper folder of its own, as with
Docker's overlay2. The container's configuration is written by this module (no template, no
`lxc-create`): limits as `lxc.cgroup.*` keys on cgroup v1 and `lxc.cgroup2.*` on v2, chosen by
probing the host; the results folder and scratch volumes bind-mounted; private networks are
bridges made by runtimes/bridges.py with a fixed address per container. Everything of a
container lives in one folder under `state_dir`/lxc, removed with it (`lxc-stop -k` first)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from interference.host import cgroups
from interference.host.packages import IPROUTE, IPTABLES, HostPackage
from interference.runtimes import ovs, rootfs
from interference.runtimes.base import (
    ISOLATED,
    LIMIT_KINDS,
    NETWORK_MODES,
    Capabilities,
    ContainerSpec,
    RuntimeUnavailable,
)
from interference.runtimes.bridges import BridgedNetworks, Bridges
from interference.runtimes.local_processes import LocalProcessRuntime

PATH_IN_ROOTFS = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOW_TO_GET = "Install it with `apt-get install lxc` (Debian's lxc 5.0) and run as root."


def cgroup_keys(spec: ContainerSpec, version: int) -> list[tuple[str, str]]:
    """The limits as LXC configuration keys: the files host/cgroups.py would write, prefixed
    `lxc.cgroup.` (v1) or `lxc.cgroup2.` (v2)."""
    prefix = "lxc.cgroup." if version == 1 else "lxc.cgroup2."
    memsw = (cgroups.ROOT / "memory" / "memory.memsw.limit_in_bytes").exists()
    keys = []
    for files in cgroups.plan(spec.name, spec.cpuset, spec.cpus, spec.memory, version).values():
        for file, value in files.items():
            if value is None:  # v1 cpuset.mems: LXC copies the parent's itself
                continue
            if file == "memory.memsw.limit_in_bytes" and not memsw:
                continue  # no swap accounting on this kernel: nothing to cap
            keys.append((prefix + file, value))
    return keys


class LxcRuntime(BridgedNetworks, rootfs.ExportedTreeImages, LocalProcessRuntime):
    name = "lxc"
    description = "LXC (lxc-execute, the image's exported root file system under an overlay)"
    report_order = 30
    host_packages = (HostPackage("lxc", "lxc-execute", "LXC's tools"), IPROUTE, IPTABLES)
    capabilities = Capabilities(
        networks=True,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="root file system (exported from the Docker image), overlay per container",
        image_from="docker",
        network_modes=frozenset({*NETWORK_MODES, ISOLATED}),
    )
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rootfs_dir": {"type": "string", "default": "/var/lib/interference/rootfs"},
            "state_dir": {
                "type": "string",
                "default": "/var/lib/interference/lxc",
                "description": "containers' configurations and upper layers, logs, networks, volumes",
            },
        },
    }

    def __init__(self, **options):
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        super().__init__(**o)
        self.rootfs_dir = Path(o["rootfs_dir"])
        self.lxcpath = self.state_dir / "lxc"
        self.bridges = Bridges(self.state_dir)
        self.attached: dict[str, ovs.OvsSwitch] = {}  # containers on an OVS bridge

    # -- itself ----------------------------------------------------------------------------
    def check(self) -> None:
        missing = [f"the `{t}` command" for t in ("lxc-execute", "lxc-stop", "ip") if shutil.which(t) is None]
        if os.geteuid() != 0:
            missing.append("root (privileged containers, cgroups and bridges)")
        if missing:
            raise RuntimeUnavailable(f"The LXC runtime (lxc) needs {', '.join(missing)}. {HOW_TO_GET}")

    def describe(self) -> dict:
        version = subprocess.run(["lxc-execute", "--version"], capture_output=True, text=True).stdout.strip()
        v = cgroups.version()
        return {
            "runtime": self.name,
            "engine": "LXC (lxc-execute)",
            "version": version,
            "cgroup_version": str(v),
            "cgroup_driver": "cgroupfs",
            "storage_driver": "overlay on the exported root file system",
            "kernel": os.uname().release,
            "os": os.uname().sysname,
            "details": {
                "containers": "lxc-execute with a configuration written by the runtime (no template)",
                "limits": f"lxc.cgroup{'2' if v == 2 else ''}.* keys",
            },
        }

    # -- images: Docker's, exported (rootfs.ExportedTreeImages) ---------------------------

    # -- runs --------------------------------------------------------------------------------
    def _config_lines(self, spec: ContainerSpec) -> list[str]:
        here = self.lxcpath / spec.name
        lower = spec.image.removeprefix("rootfs:")
        lines = [
            f"lxc.uts.name = {spec.name[-60:]}",
            f"lxc.rootfs.path = overlay:{lower}:{here}/upper",
            "lxc.mount.auto = proc:mixed sys:ro cgroup:ro:force",
            "lxc.autodev = 1",
            "lxc.apparmor.profile = unconfined",
            f"lxc.environment = PATH={PATH_IN_ROOTFS}",
            "lxc.environment = HOME=/root",
        ]
        lines += [f"lxc.environment = {k}={v}" for k, v in sorted(spec.env.items())]
        mounts = [(str(Path(h).resolve()), c) for h, c in spec.binds]
        mounts += [(str(self._volume_dir(v)), c) for v, c in spec.volumes]
        lines += [f"lxc.mount.entry = {h} {c.lstrip('/')} none bind,create=dir 0 0" for h, c in mounts]
        if spec.network or spec.network_mode == "bridge":
            if spec.network_mode == "bridge":  # a bridge of its own, the host on it, NATed
                address, prefix, bridge, gateway = self.own_bridge(spec.name, spec.labels)
            else:
                (address, prefix, bridge), gateway = self.bridges.address_for(spec.network, spec.name), None
            lines += [
                "lxc.net.0.type = veth",
                f"lxc.net.0.link = {bridge}",
                "lxc.net.0.flags = up",
                f"lxc.net.0.ipv4.address = {address}/{prefix}",
            ]
            lines += [f"lxc.net.0.ipv4.gateway = {gateway}"] if gateway else []
        elif spec.network_mode == "host":
            lines.append("lxc.net.0.type = none")  # the host's network namespace
        else:
            lines.append("lxc.net.0.type = empty")  # loopback only (ovs: a veth comes after the start)
        lines += [f"{k} = {v}" for k, v in cgroup_keys(spec, cgroups.version())]
        return lines

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        config = self.lxcpath / spec.name / "config"
        return [
            "lxc-execute",
            "-n",
            spec.name,
            "-P",
            str(self.lxcpath),
            "-f",
            str(config),
            "--",
            *spec.command,
        ]

    def start(self, spec: ContainerSpec) -> None:
        here = self.lxcpath / spec.name
        (here / "upper").mkdir(parents=True)
        (here / "config").write_text("\n".join(self._config_lines(spec)) + "\n")
        proc = self._launch(spec, {})
        if spec.network_mode == "ovs":
            switch = ovs.OvsSwitch(spec.labels[ovs.RUN_LABEL])
            switch.attach_netns(spec.name, self._init_pid(spec.name, proc))
            self.attached[spec.name] = switch

    def netns_pid(self, name: str) -> int:
        return self._init_pid(name, self.procs[name])

    def entity_pid(self, name: str) -> int | None:
        return self.netns_pid(name)  # the container's init (lxc-start itself stays outside)

    def _init_pid(self, name: str, proc) -> int:
        """The container's init, once LXC has made it (its network namespace is the container's)."""
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None:
            r = subprocess.run(
                ["lxc-info", "-n", name, "-P", str(self.lxcpath), "-p", "-H"], capture_output=True, text=True
            )
            if r.stdout.strip().isdigit():
                return int(r.stdout.strip())
            time.sleep(0.05)
        raise RuntimeError(f"LXC container {name} did not start: {self.logs(name)[-2000:]}")

    def remove(self, name: str) -> None:
        subprocess.run(
            ["lxc-stop", "-n", name, "-P", str(self.lxcpath), "-k"], capture_output=True, timeout=60
        )
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is None:
            proc.kill()
        self._forget(name)
        shutil.rmtree(self.lxcpath / name, ignore_errors=True)
