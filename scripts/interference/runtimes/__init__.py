"""Runtime adapters. Each module defines one class with the ContainerRuntime interface
(runtimes/base.py) and its Capabilities; ADAPTERS maps the config value to it. A new runtime
is one module here plus one line below."""

from interference.runtimes.apptainer import ApptainerRuntime
from interference.runtimes.baremetal import BareMetalRuntime
from interference.runtimes.base import (
    CAPABILITY_WORDS,
    Capabilities,
    ContainerRuntime,
    ContainerSpec,
    RuntimeUnavailable,
)
from interference.runtimes.docker import DockerRuntime
from interference.runtimes.lxc import LxcRuntime
from interference.runtimes.nested import NestedRuntime
from interference.runtimes.podman import PodmanRuntime
from interference.runtimes.vm import VmRuntime

ADAPTERS: dict[str, type[ContainerRuntime]] = {
    "docker": DockerRuntime,
    "podman": PodmanRuntime,
    "baremetal": BareMetalRuntime,
    "lxc": LxcRuntime,
    "nested": NestedRuntime,
    "vm": VmRuntime,
    "apptainer": ApptainerRuntime,
}


def get(name: str, options: dict | None = None) -> ContainerRuntime:
    return ADAPTERS[name](**(options or {}))


def description(name: str) -> str:
    """What a runtime is, for the report (its adapter's `description`; the name if unknown)."""
    adapter = ADAPTERS.get(name)
    return adapter.description if adapter and adapter.description else name


def entity(name: str) -> str:
    """The kind of entity a runtime makes: "bare metal", "container", "nested" or "vm" ("" for a
    name no adapter has)."""
    adapter = ADAPTERS.get(name)
    return adapter.entity if adapter else ""


def in_report_order(names) -> list[str]:
    """Runtime names as the report lists them (each adapter's `report_order`; unknown ones last)."""
    return sorted(names, key=lambda n: (ADAPTERS[n].report_order if n in ADAPTERS else 999, n))


__all__ = [
    "ADAPTERS",
    "CAPABILITY_WORDS",
    "Capabilities",
    "ContainerRuntime",
    "ContainerSpec",
    "RuntimeUnavailable",
    "description",
    "entity",
    "get",
    "in_report_order",
]
