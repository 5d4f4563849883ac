"""Podman adapter: Debian's podman through its CLI, daemonless (the shared part is oci_cli.py).

What this needs on a machine without systemd (like the Firecracker VMs this was built on):
the cgroupfs cgroup manager and a file events backend (podman's defaults talk to systemd and
journald); and `--ulimit host`, because podman otherwise raises the containers' open-file
and process limits, which fails where the process lacks CAP_SYS_RESOURCE: the containers get
the limits podman's own processes have instead (`--ulimit host` is refused by `build` and still
raises the process limit here). Both are options, recorded in describe(). Networks are netavark bridges with aardvark-dns; a server is addressed by its
IP on the run's network, which needs no DNS at all."""

from __future__ import annotations

import json
import resource

from interference.host.packages import HostPackage
from interference.runtimes.base import ISOLATED, LIMIT_KINDS, NETWORK_MODES, Capabilities
from interference.runtimes.oci_cli import OciCliRuntime

PODMAN_NPROC = 32768
HOW_TO_GET = "Install it with `apt-get install podman` (scripts/ensure-engine.sh does, as root)."


class PodmanRuntime(OciCliRuntime):
    name = "podman"
    description = "Podman"
    report_order = 20
    host_packages = (HostPackage("podman", "podman", "the Podman CLI"),)
    binary = "podman"
    engine_name = "Podman"
    capabilities = Capabilities(
        networks=True,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="podman image",
        network_modes=frozenset({*NETWORK_MODES, ISOLATED}),
    )
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "cgroup_manager": {"enum": ["cgroupfs", "systemd"], "default": "cgroupfs"},
            "events_backend": {"enum": ["file", "journald", "none"], "default": "file"},
            "ulimit_host": {
                "type": "boolean",
                "default": True,
                "description": "keep the limits podman runs with (raising them needs CAP_SYS_RESOURCE)",
            },
        },
    }
    how_to_get = HOW_TO_GET

    def __init__(self, **options):
        super().__init__(**options)
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        self.settings = o
        self.global_args = ("--cgroup-manager", o["cgroup_manager"], "--events-backend", o["events_backend"])
        ulimits = self.own_limits() if o["ulimit_host"] else ()
        # k8s-file: a log driver that works without journald.
        self.run_args = (*ulimits, "--log-driver", "k8s-file")
        self.build_args = ulimits

    @staticmethod
    def own_limits() -> tuple[str, ...]:
        """--ulimit flags for the open-file and process limits podman's processes run with:
        ours, except that podman lowers its process limit to 32768 (seen in conmon's
        /proc/<pid>/limits), and runc cannot raise a child above its own."""
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        nproc = [
            min(v if v >= 0 else PODMAN_NPROC, PODMAN_NPROC)
            for v in resource.getrlimit(resource.RLIMIT_NPROC)
        ]
        return ("--ulimit", "nofile={}:{}".format(*nofile), "--ulimit", "nproc={}:{}".format(*nproc))

    def unavailable(self, stderr: str) -> bool:
        return "cannot connect to Podman" in stderr

    def describe(self) -> dict:
        info = json.loads(self._cli("info", "--format", "json").stdout)
        host, store = info.get("host", {}), info.get("store", {})
        return {
            "runtime": self.name,
            "engine": "Podman",
            "version": info.get("version", {}).get("Version"),
            "cgroup_version": str(host.get("cgroupVersion", "")).lstrip("v"),
            "cgroup_driver": host.get("cgroupManager"),
            "storage_driver": store.get("graphDriverName"),
            "kernel": host.get("kernel"),
            "os": host.get("distribution", {}).get("distribution"),
            "oci_runtime": host.get("ociRuntime", {}).get("name"),
            "network_backend": host.get("networkBackend"),
            "options": self.settings,
        }

    def address_of(self, name: str) -> str:
        inspect = json.loads(self._cli("inspect", name).stdout)[0]
        networks = inspect["NetworkSettings"]["Networks"]
        return next(iter(networks.values()))["IPAddress"]
