"""Docker adapter: the docker CLI, so every command is recordable and runs as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from interference.runtimes.base import (
    LIMIT_KINDS,
    Capabilities,
    ContainerRuntime,
    ContainerSpec,
    RuntimeUnavailable,
)

HOW_TO_START = (
    "Start it with `dockerd &` (as root) or `systemctl start docker`; on Debian install it "
    "with `apt-get install docker.io`. scripts/ensure-engine.sh does both."
)


class DockerRuntime(ContainerRuntime):
    name = "docker"
    capabilities = Capabilities(
        networks=True, volumes=True, limits=frozenset(LIMIT_KINDS), image_format="docker image"
    )

    def __init__(self, binary: str = "docker", **options):
        super().__init__(**options)
        self.binary = binary

    def check(self) -> None:
        self.describe()

    def tool_versions(self, ref: str) -> dict:
        r = self._cli(
            "run",
            "--rm",
            "--entrypoint",
            "sh",
            ref,
            "-c",
            "cat /opt/microservices/*/versions.txt 2>/dev/null",
            check=False,
        )
        return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)

    def _cli(self, *args: str, check: bool = True, timeout: float | None = 120, **kw):
        if shutil.which(self.binary) is None:
            raise RuntimeUnavailable(f"The docker CLI ({self.binary}) is not installed. {HOW_TO_START}")
        try:
            return subprocess.run(
                [self.binary, *args], check=check, capture_output=True, text=True, timeout=timeout, **kw
            )
        except subprocess.CalledProcessError as e:
            if (
                "Cannot connect to the Docker daemon" in e.stderr
                or "Is the docker daemon running" in e.stderr
            ):
                raise RuntimeUnavailable(
                    f"The Docker engine does not answer ({e.stderr.strip()}). {HOW_TO_START}"
                ) from None
            raise

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

    def _inspect_image(self, ref: str) -> dict | None:
        r = self._cli("image", "inspect", ref, check=False)
        return json.loads(r.stdout)[0] if r.returncode == 0 else None

    def image_id(self, ref: str) -> str | None:
        d = self._inspect_image(ref)
        return d["Id"] if d else None

    def pull(self, ref: str, log: Path) -> bool:
        r = self._cli("pull", ref, check=False, timeout=600)
        with open(log, "a") as f:
            f.write(f"$ docker pull {ref}\n{r.stdout}{r.stderr}")
        return r.returncode == 0

    def import_rootfs(self, rootfs: Path, ref: str, log: Path) -> None:
        # tar streams the folder with numeric owners; docker import turns it into an image.
        with open(log, "a") as f:
            f.write(f"$ tar -C {rootfs} -c . | docker import - {ref}\n")
            tar = subprocess.Popen(
                ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE, stderr=f
            )
            subprocess.run(
                [self.binary, "import", "-", ref], stdin=tar.stdout, stdout=f, stderr=f, check=True
            )
            if tar.wait() != 0:
                raise RuntimeError(f"tar of {rootfs} failed; see {log}")

    def build(self, context, dockerfile, ref, build_args, labels, log) -> None:
        argv = [self.binary, "build", "--network", "host", "-t", ref, "-f", str(dockerfile)]
        for k, v in build_args.items():
            argv += ["--build-arg", f"{k}={v}"]
        for k, v in labels.items():
            argv += ["--label", f"{k}={v}"]
        argv.append(str(context))
        with open(log, "a") as f:
            f.write("$ " + " ".join(argv) + "\n")
            f.flush()
            # The classic builder: Debian's docker.io has no buildx plugin.
            r = subprocess.run(
                argv, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, "DOCKER_BUILDKIT": "0"}
            )
        if r.returncode != 0:
            raise RuntimeError(f"docker build of {ref} failed (exit {r.returncode}); see {log}")

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        argv = [self.binary, "run", "--detach", "--name", spec.name]
        for k, v in sorted(spec.labels.items()):
            argv += ["--label", f"{k}={v}"]
        if spec.cpuset is not None:
            argv += ["--cpuset-cpus", spec.cpuset]
        if spec.cpus is not None:
            argv += ["--cpus", f"{spec.cpus:g}"]
        if spec.memory is not None:
            argv += ["--memory", spec.memory, "--memory-swap", spec.memory]
        if spec.network:
            argv += ["--network", spec.network]
        for host_dir, ctr_dir in spec.binds:
            argv += ["--volume", f"{Path(host_dir).resolve()}:{ctr_dir}"]
        for volume, ctr_dir in spec.volumes:
            argv += ["--volume", f"{volume}:{ctr_dir}"]
        for k, v in sorted(spec.env.items()):
            argv += ["--env", f"{k}={v}"]
        return argv + [spec.image, *spec.command]

    def start(self, spec: ContainerSpec) -> None:
        self._cli(*self.run_argv(spec)[1:])

    def wait(self, name: str, timeout_s: float) -> int | None:
        try:
            r = self._cli("wait", name, timeout=max(timeout_s, 1))
        except subprocess.TimeoutExpired:
            return None
        return int(r.stdout.strip().splitlines()[-1])

    def logs(self, name: str) -> str:
        r = self._cli("logs", name, check=False)
        return r.stdout + r.stderr

    def remove(self, name: str) -> None:
        self._cli("rm", "-f", "-v", name, check=False)

    def remove_labelled(self, label: str, value: str) -> list[str]:
        removed = []
        selector = f"label={label}={value}"
        ids = self._cli("ps", "-aq", "--filter", selector).stdout.split()
        if ids:
            self._cli("rm", "-f", "-v", *ids)
            removed += [f"container {i}" for i in ids]
        for kind in ("network", "volume"):
            names = self._cli(kind, "ls", "-q", "--filter", selector).stdout.split()
            if names:
                self._cli(kind, "rm", *names, check=False)
                removed += [f"{kind} {n}" for n in names]
        return removed

    def create_network(self, name: str, labels: dict) -> None:
        self._cli("network", "create", *[f"--label={k}={v}" for k, v in labels.items()], name)

    def create_volume(self, name: str, labels: dict) -> None:
        self._cli("volume", "create", *[f"--label={k}={v}" for k, v in labels.items()], name)
