"""Docker adapter: Debian's docker.io through its CLI (the shared part is oci_cli.py)."""

from __future__ import annotations

import json

from interference.host.packages import DOCKER
from interference.runtimes.base import ISOLATED, LIMIT_KINDS, NETWORK_MODES, Capabilities, RuntimeUnavailable
from interference.runtimes.oci_cli import OciCliRuntime

HOW_TO_START = (
    "Start it with `dockerd &` (as root) or `systemctl start docker`; on Debian install it "
    "with `apt-get install docker.io`. scripts/ensure-engine.sh does both."
)


class DockerRuntime(OciCliRuntime):
    name = "docker"
    description = "Docker"
    report_order = 10
    host_packages = (DOCKER,)
    binary = "docker"
    engine_name = "Docker"
    capabilities = Capabilities(
        networks=True,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="docker image",
        network_modes=frozenset({*NETWORK_MODES, ISOLATED}),
    )
    # The classic builder: Debian's docker.io has no buildx plugin.
    build_env = {"DOCKER_BUILDKIT": "0"}
    how_to_get = HOW_TO_START

    def unavailable(self, stderr: str) -> bool:
        return "Cannot connect to the Docker daemon" in stderr or "Is the docker daemon running" in stderr

    def describe(self) -> dict:
        info = json.loads(self._cli("info", "--format", "{{json .}}").stdout)
        if info.get("ServerErrors"):
            raise RuntimeUnavailable(
                f"The Docker engine does not answer: {info['ServerErrors']}. {HOW_TO_START}"
            )
        return {
            "runtime": self.name,
            "engine": "Docker Engine",
            "version": info.get("ServerVersion"),
            "cgroup_version": info.get("CgroupVersion"),
            "cgroup_driver": info.get("CgroupDriver"),
            "storage_driver": info.get("Driver"),
            "kernel": info.get("KernelVersion"),
            "os": info.get("OperatingSystem"),
        }
