"""What every runtime adapter does, and what it declares it can do.

A runtime makes (or converts) images, starts an isolated command with cgroup limits, waits
for it, collects its output, removes everything a run made, and describes itself. Each
adapter declares its Capabilities; a study that needs one a runtime lacks is refused before
anything runs (interference.steps.config). Nothing outside runtimes/ calls an engine."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path

from interference.host.packages import HostPackage

LIMIT_KINDS = ("cpuset", "cpus", "memory")
# How an entity can be attached to the host's network (paper 001, Tables II and III): "host"
# shares the host's network stack; "bridge" is a Linux bridge with NAT rules (the engine's own
# where it has one); "ovs" is an Open vSwitch bridge (runtimes/ovs.py). A nested runtime's
# modes are PARENT+CHILD pairs, e.g. "ovs+bridge".
NETWORK_MODES = ("host", "bridge", "ovs")
# A further mode: the entity gets loopback only, and netns_pid() names a process in its network
# namespace, which the study then wires itself (the pingpong study's simulated hosts).
ISOLATED = "none"
LOOPBACK = "127.0.0.1"  # an entity on the host's network reaches it, and is reached, here


class RuntimeUnavailable(RuntimeError):
    """The runtime cannot be used here; the message says which, what is missing and how to fix it."""


@dataclass(frozen=True)
class Capabilities:
    # Private networks: a server started by the run is reachable by its name.
    networks: bool
    # Named scratch volumes, made for a run and removed after it.
    volumes: bool
    # Which cgroup limits it applies: a subset of LIMIT_KINDS.
    limits: frozenset[str]
    # What an image is for it, e.g. "docker image", "podman image", "root file system".
    image_format: str
    # None: it builds images from containers/ itself; else the runtime whose images it converts.
    image_from: str | None = None
    # The network modes (NETWORK_MODES, or PARENT+CHILD pairs) it can attach an entity with.
    network_modes: frozenset[str] = frozenset()

    def lacks(self, needed: set[str]) -> list[str]:
        """The capabilities in `needed` (names as in describe_needs) that this runtime lacks."""
        have = {"networks": self.networks, "volumes": self.volumes}
        have.update({f"limit:{k}": k in self.limits for k in LIMIT_KINDS})
        return sorted(n for n in needed if not have.get(n, False))


CAPABILITY_WORDS = {
    "networks": "private networks (a server reachable by name)",
    "volumes": "scratch volumes",
    "limit:cpuset": "CPU pinning (cpuset)",
    "limit:cpus": "CPU quota",
    "limit:memory": "memory limits",
}


@dataclass
class ContainerSpec:
    """One isolated command to start: image, command and the cgroup limits of its case."""

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
    # None: the private `network` (or the runtime's default); else one of network_modes.
    network_mode: str | None = None
    # A named network namespace (`ip netns`) to run in: the bare-metal runtime only.
    netns: str | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def limits(self) -> dict:
        return {"cpuset": self.cpuset, "cpus": self.cpus, "memory": self.memory}

    def limit_flags(self) -> list[str]:
        """The limits as Docker, Podman and Apptainer all spell them (swap capped at memory)."""
        flags = []
        if self.cpuset is not None:
            flags += ["--cpuset-cpus", self.cpuset]
        if self.cpus is not None:
            flags += ["--cpus", f"{self.cpus:g}"]
        if self.memory is not None:
            flags += ["--memory", self.memory, "--memory-swap", self.memory]
        return flags


class ContainerRuntime(abc.ABC):
    name: str
    capabilities: Capabilities
    # For the report: what it is, in a few words; what kind of entity it makes ("bare metal",
    # "container", "nested" or "vm"); and its place when runtimes are listed (bare metal first).
    description: str = ""
    entity: str = "container"
    report_order: int = 50
    # JSON schema of runtime_options.<name> in a config (defaults declared); none by default.
    options_schema: dict = {"type": "object", "additionalProperties": False, "properties": {}}
    # Files of the repository a converting runtime builds from besides the image it converts
    # (nested: its parent image), relative to the repository root: a change rebuilds its images.
    build_inputs: tuple[str, ...] = ()
    # Host packages it needs (host/packages.py); those of the runtime it converts images from
    # are added by steps/host_setup.py.
    host_packages: tuple[HostPackage, ...] = ()

    def __init__(self, **options):
        # Per-runtime options from the config's runtime_options.<name> (validated there).
        self.options = options

    # -- itself ----------------------------------------------------------------------------
    @abc.abstractmethod
    def check(self) -> None:
        """Raise RuntimeUnavailable (what is missing, how to get it) unless usable now."""

    @abc.abstractmethod
    def describe(self) -> dict:
        """Engine name and version, cgroup version and driver, storage: recorded with every run."""

    # -- images ----------------------------------------------------------------------------
    @abc.abstractmethod
    def image_id(self, ref: str) -> str | None:
        """The id of a local image, or None when absent."""

    def pull(self, ref: str, log: Path) -> bool:
        """Try to pull an image; False when no registry serves it."""
        return False

    def import_rootfs(self, rootfs: Path, ref: str, log: Path) -> None:
        """Make an image from a root file system folder (e.g. made by debootstrap)."""
        raise NotImplementedError(f"{self.name} does not import root file systems")

    def build(
        self, context: Path, dockerfile: Path, ref: str, build_args: dict, labels: dict, log: Path
    ) -> None:
        """Build an image from a Dockerfile and a context folder."""
        raise NotImplementedError(
            f"{self.name} does not build images; it converts {self.capabilities.image_from}'s"
        )

    def convert(self, source: dict, ref: str, log: Path) -> str:
        """Make this runtime's image `ref` from an image json of capabilities.image_from; its id."""
        raise NotImplementedError(f"{self.name} builds its own images")

    @abc.abstractmethod
    def tool_versions(self, ref: str) -> dict:
        """The versions each microservice's install.sh recorded in the image."""

    # -- runs ------------------------------------------------------------------------------
    def prepare(self, images: dict) -> None:  # noqa: B027 (a hook: most runtimes need nothing)
        """Make, once and outside any timing, what runs of these images need beyond the image
        itself (nested: a pre-loaded data root)."""

    def open_run(
        self,
        outdir: Path,
        labels: dict,
        images: dict,
        name: str | None = None,
        network_mode: str | None = None,
    ) -> dict:
        """Prepare what the whole run shares before its first container (nested: the parent
        container, named `name` if given, and its engine, on the parent's part of
        `network_mode`); what to record in meta.json. Removed by close_run, or with everything
        of the run by remove_labelled."""
        return {}

    def close_run(self) -> None:  # noqa: B027 (a hook: most runtimes open nothing)
        """Remove what open_run made (its containers must be removed first)."""

    @abc.abstractmethod
    def run_argv(self, spec: ContainerSpec) -> list[str]:
        """The command line that starts it (recorded in meta.json)."""

    @abc.abstractmethod
    def start(self, spec: ContainerSpec) -> None:
        """Start it in the background."""

    @abc.abstractmethod
    def wait(self, name: str, timeout_s: float) -> int | None:
        """Wait for it to exit; its exit code, or None on timeout."""

    @abc.abstractmethod
    def logs(self, name: str) -> str:
        """Its own stdout and stderr."""

    @abc.abstractmethod
    def remove(self, name: str) -> None:
        """Stop and remove one (running or not)."""

    @abc.abstractmethod
    def remove_labelled(self, label: str, value: str) -> list[str]:
        """Remove everything with this label (containers, networks, volumes, cgroups); what was removed."""

    def create_network(self, name: str, labels: dict) -> None:
        raise NotImplementedError(f"{self.name} has no private networks")

    def create_volume(self, name: str, labels: dict) -> None:
        raise NotImplementedError(f"{self.name} has no volumes")

    def address_of(self, name: str) -> str:
        """How another member of the run reaches the server started as `name`."""
        return name

    def entity_address(self, name: str) -> str:
        """The address at which the host reaches `name`, started with a network_mode."""
        raise NotImplementedError(f"{self.name} has no network modes")

    def host_address(self, name: str) -> str:
        """The address at which `name`, started with a network_mode, reaches the host."""
        raise NotImplementedError(f"{self.name} has no network modes")

    def netns_pid(self, name: str) -> int:
        """A process in the network namespace of `name` (started with network_mode ISOLATED)."""
        raise NotImplementedError(f"{self.name} hands out no network namespace")

    def entity_pid(self, name: str) -> int | None:
        """A process of `name` in this machine's pid namespace, whose cgroups are the entity's
        (contention telemetry); None where there is none (a child of an inner engine)."""
        try:
            return self.netns_pid(name)
        except NotImplementedError:
            return None
