"""A host package: what a runtime adapter, a study or the tests need installed on the machine
that runs the pipeline, under its Debian name (and Ubuntu's where it differs), with the file
that tells whether it is there. Declared beside the code that needs it (runtimes/<name>.py
`host_packages`, a study's `host_packages(cfg)`, steps/images.py, slurm.py); gathered per config by
steps/host_setup.py. This module imports nothing of the project, so anything may declare one."""

from __future__ import annotations

import glob
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class HostPackage:
    debian: str
    # A command on PATH, or an absolute path (a glob) that the package installs; "" when only
    # present_if can tell.
    provides: str
    # What it is for, in a few words (the paragraph naming what is missing says it).
    why: str
    ubuntu: str | None = None
    # Also there when this says so (e.g. a Docker engine that answers without dockerd here).
    present_if: Callable[[], bool] | None = None

    def name_on(self, distro: str) -> str:
        return self.ubuntu if distro == "ubuntu" and self.ubuntu else self.debian

    def present(self) -> bool:
        if not self.provides:
            found = False
        elif self.provides.startswith("/"):
            found = bool(glob.glob(self.provides))
        else:
            found = shutil.which(self.provides) is not None
        return found or bool(self.present_if and self.present_if())


def docker_engine_answers() -> bool:
    """A Docker engine answers the CLI here (perhaps one that runs elsewhere, or was installed
    without Debian's package)."""
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def static_busybox() -> bool:
    """/bin/busybox is statically linked (the VM's initramfs copies it alone)."""
    path = shutil.which("busybox")
    return path is not None and subprocess.run(["ldd", path], capture_output=True).returncode != 0


# What several declare.
DOCKER = HostPackage("docker.io", "dockerd", "the Docker engine", present_if=docker_engine_answers)
IPTABLES = HostPackage("iptables", "iptables", "NAT and forwarding rules of bridges")
IPROUTE = HostPackage("iproute2", "ip", "bridges, veth pairs and network namespaces")
