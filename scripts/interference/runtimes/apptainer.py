"""Apptainer (formerly Singularity), the HPC runtime: a SIF image built from the Docker image,
commands run by `apptainer exec` with cgroup limits (root, or cgroup v2 with delegation).

Apptainer cannot be installed on the machines this was developed on (no reachable registry
carries it; Debian bookworm has no package), so check() refuses it there with how to install
it; GitHub Actions installs it and runs config/apptainer-ci.yaml (.github/workflows/report.yml).
No private networks: processes share the host's network namespace, so a study needing them is
refused. Volumes are directories bound in."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from interference.runtimes.base import LIMIT_KINDS, Capabilities, ContainerSpec, RuntimeUnavailable
from interference.runtimes.local_processes import LocalProcessRuntime

HOW_TO_GET = (
    "Apptainer is not installed (`apptainer` not on PATH). No registry reachable here carries it and "
    "Debian bookworm has no package: install a release from apptainer.org (>= 1.3.4; e.g. its .deb "
    "for Ubuntu 24.04), or in GitHub Actions the eWaterCycle/setup-apptainer action; or leave "
    "`apptainer` out of the config's runtimes."
)


class ApptainerRuntime(LocalProcessRuntime):
    name = "apptainer"
    description = "Apptainer (a SIF built from the Docker image)"
    report_order = 60
    capabilities = Capabilities(
        networks=False,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="SIF (built from the Docker image)",
        image_from="docker",
    )
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "sif_dir": {"type": "string", "default": "/var/lib/interference/sif"},
            "state_dir": {"type": "string", "default": "/var/lib/interference/apptainer"},
        },
    }

    def __init__(self, **options):
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        super().__init__(**o)
        self.sif_dir = Path(o["sif_dir"])

    def _cli(self, *args: str, **kw) -> subprocess.CompletedProcess:
        if shutil.which("apptainer") is None:
            raise RuntimeUnavailable(HOW_TO_GET)
        return subprocess.run(["apptainer", *args], capture_output=True, text=True, **kw)

    def check(self) -> None:
        self._cli("version", check=True)

    def describe(self) -> dict:
        uname = os.uname()
        return {
            "runtime": self.name,
            "engine": "Apptainer",
            "version": self._cli("version", check=True).stdout.strip(),
            "cgroup_version": "2" if Path("/sys/fs/cgroup/cgroup.controllers").exists() else "1",
            "cgroup_driver": "apptainer (cgroups as root or delegated v2)",
            "storage_driver": "SIF",
            "kernel": uname.release,
            "os": uname.sysname,
        }

    # -- images: Docker's, as SIF ------------------------------------------------------------
    def _sif(self, ref: str) -> Path:
        return self.sif_dir / (ref.replace("/", "_").replace(":", "_") + ".sif")

    def image_id(self, ref: str) -> str | None:
        return f"sif:{self._sif(ref)}" if self._sif(ref).exists() else None

    def convert(self, source: dict, ref: str, log: Path) -> str:
        sif = self._sif(ref)
        sif.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=sif.parent) as tmp, open(log, "a") as f:
            archive, partial = Path(tmp) / "image.tar", Path(tmp) / "image.sif"
            for argv in (
                ["docker", "save", "-o", str(archive), source["ref"]],
                ["apptainer", "build", str(partial), f"docker-archive:{archive}"],
            ):
                f.write("$ " + shlex.join(argv) + "\n")
                f.flush()
                subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, check=True)
            partial.rename(sif)  # only a complete SIF gets the image's name
        return f"sif:{sif}"

    def tool_versions(self, ref: str) -> dict:
        r = self._cli(
            "exec", str(self._sif(ref)), "sh", "-c", "cat /opt/microservices/*/versions.txt 2>/dev/null"
        )
        return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)

    # -- runs --------------------------------------------------------------------------------
    def run_argv(self, spec: ContainerSpec) -> list[str]:
        argv = ["apptainer", "exec", "--containall", "--cleanenv", "--writable-tmpfs"]
        argv += spec.limit_flags()
        binds = [(str(Path(h).resolve()), c) for h, c in spec.binds]
        binds += [(str(self._volume_dir(v)), c) for v, c in spec.volumes]
        for host_dir, ctr_dir in binds:
            argv += ["--bind", f"{host_dir}:{ctr_dir}"]
        for k, v in sorted(spec.env.items()):
            argv += ["--env", f"{k}={v}"]
        return argv + [spec.image.removeprefix("sif:"), *spec.command]

    def start(self, spec: ContainerSpec) -> None:
        if spec.network:
            raise RuntimeUnavailable("Apptainer has no private networks")
        # Its own session: the whole process group can be killed, also by another process.
        self._launch(spec, {}, start_new_session=True)

    def remove(self, name: str) -> None:
        pgid = self._record(name).get("pid")
        if pgid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        self._forget(name)
