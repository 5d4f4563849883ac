"""The small interface every container runtime adapter implements."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path


class RuntimeUnavailable(RuntimeError):
    """The engine does not answer; the message says which engine and how to start it."""


@dataclass
class ContainerSpec:
    """One container to start: image, command and the cgroup limits of its case."""

    name: str
    image: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cpuset: str | None = None  # e.g. "0" or "0-1": pin to these cores
    cpus: float | None = None  # CFS quota in cores
    memory: str | None = None  # e.g. "2g"; swap is capped at the same value
    binds: list[tuple[str, str]] = field(default_factory=list)  # (host dir, container dir)
    volumes: list[tuple[str, str]] = field(default_factory=list)  # (volume name, container dir)
    network: str | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def limits(self) -> dict:
        return {"cpuset": self.cpuset, "cpus": self.cpus, "memory": self.memory}


class ContainerRuntime(abc.ABC):
    name: str

    @abc.abstractmethod
    def describe(self) -> dict:
        """Engine name and version, cgroup version and driver, storage driver."""

    @abc.abstractmethod
    def image_id(self, ref: str) -> str | None:
        """The id of a local image, or None when absent."""

    @abc.abstractmethod
    def pull(self, ref: str, log: Path) -> bool:
        """Try to pull an image; False when no registry serves it."""

    @abc.abstractmethod
    def import_rootfs(self, rootfs: Path, ref: str, log: Path) -> None:
        """Make an image from a root file system folder (e.g. made by debootstrap)."""

    @abc.abstractmethod
    def build(
        self, context: Path, dockerfile: Path, ref: str, build_args: dict, labels: dict, log: Path
    ) -> None:
        """Build an image from a Dockerfile and a context folder."""

    @abc.abstractmethod
    def run_argv(self, spec: ContainerSpec) -> list[str]:
        """The command line that starts the container detached (recorded in meta.json)."""

    @abc.abstractmethod
    def start(self, spec: ContainerSpec) -> str:
        """Start the container detached; return its id."""

    @abc.abstractmethod
    def wait(self, name: str, timeout_s: float) -> int | None:
        """Wait for the container to exit; its exit code, or None on timeout."""

    @abc.abstractmethod
    def logs(self, name: str) -> str:
        """The container's own stdout and stderr."""

    @abc.abstractmethod
    def remove(self, name: str) -> None:
        """Remove one container (running or not) and its anonymous volumes."""

    @abc.abstractmethod
    def remove_labelled(self, label: str, value: str) -> list[str]:
        """Remove every container, network and volume with this label; return what was removed."""

    @abc.abstractmethod
    def create_network(self, name: str, labels: dict) -> None: ...

    @abc.abstractmethod
    def create_volume(self, name: str, labels: dict) -> None: ...
