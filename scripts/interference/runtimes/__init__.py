"""Container runtime adapters. Each module defines one class with the ContainerRuntime
interface (runtimes/base.py); ADAPTERS maps the config value to it. A new runtime is one
module here plus one line below."""

from interference.runtimes.base import ContainerRuntime, ContainerSpec, RuntimeUnavailable
from interference.runtimes.docker import DockerRuntime

ADAPTERS: dict[str, type[ContainerRuntime]] = {"docker": DockerRuntime}


def get(name: str) -> ContainerRuntime:
    return ADAPTERS[name]()


__all__ = ["ADAPTERS", "ContainerRuntime", "ContainerSpec", "RuntimeUnavailable", "get"]
