"""Runtime adapters. Each module defines one class with the ContainerRuntime interface
(runtimes/base.py) and its Capabilities; ADAPTERS maps the config value to it. A new runtime
is one module here plus one line below."""

from interference.runtimes.apptainer import ApptainerRuntime
from interference.runtimes.base import (
    CAPABILITY_WORDS,
    Capabilities,
    ContainerRuntime,
    ContainerSpec,
    RuntimeUnavailable,
)
from interference.runtimes.docker import DockerRuntime
from interference.runtimes.host import HostRuntime
from interference.runtimes.lxc import LxcRuntime
from interference.runtimes.nested import NestedRuntime
from interference.runtimes.podman import PodmanRuntime
from interference.runtimes.vm import VmRuntime

ADAPTERS: dict[str, type[ContainerRuntime]] = {
    "docker": DockerRuntime,
    "podman": PodmanRuntime,
    "host": HostRuntime,
    "lxc": LxcRuntime,
    "nested": NestedRuntime,
    "vm": VmRuntime,
    "apptainer": ApptainerRuntime,
}


def get(name: str, options: dict | None = None) -> ContainerRuntime:
    return ADAPTERS[name](**(options or {}))


__all__ = [
    "ADAPTERS",
    "CAPABILITY_WORDS",
    "Capabilities",
    "ContainerRuntime",
    "ContainerSpec",
    "RuntimeUnavailable",
    "get",
]
