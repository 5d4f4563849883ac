"""Bare metal (`baremetal`): the same benchmark binaries as the containers, without container
namespaces, under cgroup limits the runner makes itself.

Images are the Docker images' root file systems (exported once into `rootfs_dir`), so
"container vs bare metal" compares identical binaries. A command runs chrooted into that
tree with the host's network, PID, IPC, UTS and user namespaces; only a private mount
namespace (`unshare --mount`) makes the results folder, scratch volumes, /proc, /sys and /dev
visible inside, and takes those mounts away when the command exits. Its process joins its
own cgroup (host/cgroups.py: v1 or v2) before it starts. No private networks: a study
needing them is refused for this runtime."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from interference.host import cgroups
from interference.host.packages import HostPackage
from interference.runtimes import rootfs
from interference.runtimes.base import (
    LIMIT_KINDS,
    LOOPBACK,
    Capabilities,
    ContainerSpec,
    RuntimeUnavailable,
)
from interference.runtimes.local_processes import LocalProcessRuntime

PATH_IN_ROOTFS = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class BareMetalRuntime(rootfs.ExportedTreeImages, LocalProcessRuntime):
    name = "baremetal"
    description = "bare metal: the same binaries in a chroot with cgroups, no container namespaces"
    entity = "bare metal"
    report_order = 0
    host_packages = (HostPackage("util-linux", "unshare", "a private mount namespace per command"),)
    capabilities = Capabilities(
        networks=False,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="root file system (exported from the Docker image)",
        image_from="docker",
        network_modes=frozenset({"host"}),  # the host's own stack: host-to-host
    )
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rootfs_dir": {"type": "string", "default": "/var/lib/interference/rootfs"},
            "state_dir": {
                "type": "string",
                "default": "/var/lib/interference/host",
                "description": "logs, labels and scratch volumes of the commands it runs",
            },
        },
    }

    def __init__(self, **options):
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        super().__init__(**o)
        self.rootfs_dir = Path(o["rootfs_dir"])

    # -- itself ----------------------------------------------------------------------------
    def check(self) -> None:
        missing = []
        if os.geteuid() != 0:
            missing.append("root (it makes cgroups, mounts and chroots)")
        missing += [f"the `{t}` command" for t in ("unshare", "chroot", "mount") if shutil.which(t) is None]
        v = cgroups.version()
        writable = [cgroups.ROOT] if v == 2 else [cgroups.ROOT / c for c in cgroups.V1_CONTROLLERS]
        missing += [f"write access to {p}" for p in writable if not os.access(p, os.W_OK)]
        if missing:
            raise RuntimeUnavailable(
                f"The bare-metal runtime (baremetal) needs {', '.join(missing)}. Run as root on a machine whose "
                "cgroup file system is mounted read-write, or leave `baremetal` out of the config's runtimes."
            )

    def describe(self) -> dict:
        uname = os.uname()
        return {
            "runtime": self.name,
            "engine": "bare metal (chroot + cgroups, no container namespaces)",
            "version": uname.release,
            "cgroup_version": str(cgroups.version()),
            "cgroup_driver": "cgroupfs (made by the runner)",
            "storage_driver": "root file system folder",
            "kernel": uname.release,
            "os": uname.sysname,
        }

    # -- images: Docker's, exported (rootfs.ExportedTreeImages) ---------------------------

    # -- runs --------------------------------------------------------------------------------
    def _script(self, spec: ContainerSpec) -> str:
        """The shell that runs in the private mount namespace: mounts, then chroot."""
        root = shlex.quote(spec.image.removeprefix("rootfs:"))
        lines = [
            "set -e",
            f"mount -t proc proc {root}/proc",
            f"mount --rbind /sys {root}/sys",
            f"mount --rbind /dev {root}/dev",
            f"mount -t tmpfs tmpfs {root}/tmp",  # the image's /tmp stays as exported
        ]
        mounts = [(str(Path(h).resolve()), c) for h, c in spec.binds]
        mounts += [(str(self._volume_dir(v)), c) for v, c in spec.volumes]
        for host_dir, ctr_dir in mounts:
            target = root + shlex.quote(ctr_dir)
            lines += [f"mkdir -p {target}", f"mount --bind {shlex.quote(host_dir)} {target}"]
        env = ["env", "-i", f"PATH={PATH_IN_ROOTFS}", "HOME=/root"]
        env += [f"{k}={v}" for k, v in sorted(spec.env.items())]
        lines.append("exec chroot " + root + " " + shlex.join(env + spec.command))
        return "\n".join(lines)

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", self._script(spec)]
        return ["ip", "netns", "exec", spec.netns, *argv] if spec.netns else argv

    def start(self, spec: ContainerSpec) -> None:
        if spec.network or spec.network_mode not in (None, "host"):
            raise RuntimeUnavailable("the bare-metal runtime has no private networks (only the host's)")
        folders = cgroups.create(spec.name, spec.cpuset, spec.cpus, spec.memory)
        # Joins its cgroups between fork and exec: no instruction runs outside the limits.
        self._launch(spec, {}, preexec_fn=lambda: cgroups.join(folders, os.getpid()))

    def remove(self, name: str) -> None:
        cgroups.kill_and_remove(name)
        self._forget(name)

    def entity_address(self, name: str) -> str:
        return LOOPBACK

    def host_address(self, name: str) -> str:
        return LOOPBACK
