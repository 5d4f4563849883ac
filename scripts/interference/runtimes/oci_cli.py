"""What Docker and Podman share: a CLI whose commands agree (run, wait, logs, rm, build,
import, network, volume, labels). Each command is recordable and runs as a user would; the
subclasses say which binary, its global flags, and how to describe and check the engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from interference.host import cgroups
from interference.runtimes import ovs
from interference.runtimes.base import (
    ISOLATED,
    LOOPBACK,
    ContainerRuntime,
    ContainerSpec,
    RuntimeUnavailable,
)

# The engine's --network per network mode; "ovs": none, the veth is put in after the start.
NETWORK_FLAG = {"host": "host", "bridge": "bridge", "ovs": "none", ISOLATED: "none"}


class OciCliRuntime(ContainerRuntime):
    binary: str
    # Flags before the subcommand (podman: cgroup manager, events backend).
    global_args: tuple[str, ...] = ()
    # Flags of `run` and `build` every container or build gets.
    run_args: tuple[str, ...] = ()
    build_args: tuple[str, ...] = ()
    build_env: dict = {}
    how_to_get: str = ""
    engine_name: str = ""

    def __init__(self, **options):
        super().__init__(**options)
        # (network mode, run id) of each container started with a network mode by this process.
        self.attached: dict[str, tuple[str, str]] = {}
        self.ids: dict[str, str] = {}  # name -> full container id, as `run --detach` printed it

    def unavailable(self, stderr: str) -> bool:
        """Whether a failed command means the engine itself does not answer."""
        return False

    def _cli(self, *args: str, check: bool = True, timeout: float | None = 120, **kw):
        if shutil.which(self.binary) is None:
            raise RuntimeUnavailable(f"The {self.binary} CLI is not installed. {self.how_to_get}")
        try:
            return subprocess.run(
                [self.binary, *self.global_args, *args],
                check=check,
                capture_output=True,
                text=True,
                timeout=timeout,
                **kw,
            )
        except subprocess.CalledProcessError as e:
            if self.unavailable(e.stderr):
                raise RuntimeUnavailable(
                    f"The {self.engine_name} engine does not answer ({e.stderr.strip()}). {self.how_to_get}"
                ) from None
            raise

    def check(self) -> None:
        self.describe()

    def tool_versions(self, ref: str) -> dict:
        r = self._cli(
            "run", "--rm", *self.run_args, "--entrypoint", "sh", ref, "-c",
            "cat /opt/microservices/*/versions.txt 2>/dev/null",
            check=False,
        )  # fmt: skip
        return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)

    def _inspect_image(self, ref: str) -> dict | None:
        r = self._cli("image", "inspect", ref, check=False)
        return json.loads(r.stdout)[0] if r.returncode == 0 else None

    def image_id(self, ref: str) -> str | None:
        d = self._inspect_image(ref)
        return d["Id"] if d else None

    def pull(self, ref: str, log: Path) -> bool:
        r = self._cli("pull", ref, check=False, timeout=600)
        with open(log, "a") as f:
            f.write(f"$ {self.binary} pull {ref}\n{r.stdout}{r.stderr}")
        return r.returncode == 0

    def import_rootfs(self, rootfs: Path, ref: str, log: Path) -> None:
        # tar streams the folder with numeric owners; docker import turns it into an image.
        with open(log, "a") as f:
            f.write(f"$ tar -C {rootfs} -c . | {self.binary} import - {ref}\n")
            tar = subprocess.Popen(
                ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE, stderr=f
            )
            subprocess.run(
                [self.binary, *self.global_args, "import", "-", ref],
                stdin=tar.stdout,
                stdout=f,
                stderr=f,
                check=True,
            )
            if tar.wait() != 0:
                raise RuntimeError(f"tar of {rootfs} failed; see {log}")

    def build(self, context, dockerfile, ref, build_args, labels, log) -> None:
        argv = [self.binary, *self.global_args, "build", "--network", "host", *self.build_args]
        argv += ["-t", ref, "-f", str(dockerfile)]
        for k, v in build_args.items():
            argv += ["--build-arg", f"{k}={v}"]
        for k, v in labels.items():
            argv += ["--label", f"{k}={v}"]
        argv.append(str(context))
        with open(log, "a") as f:
            f.write("$ " + " ".join(argv) + "\n")
            f.flush()
            r = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, **self.build_env})
        if r.returncode != 0:
            raise RuntimeError(f"{self.binary} build of {ref} failed (exit {r.returncode}); see {log}")

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        argv = [self.binary, *self.global_args, "run", "--detach", "--name", spec.name, *self.run_args]
        for k, v in sorted(spec.labels.items()):
            argv += ["--label", f"{k}={v}"]
        argv += spec.limit_flags()
        if spec.network_mode:
            argv += ["--network", NETWORK_FLAG[self.own_mode(spec.network_mode)]]
        elif spec.network:
            argv += ["--network", spec.network]
        for host_dir, ctr_dir in spec.binds:
            argv += ["--volume", f"{Path(host_dir).resolve()}:{ctr_dir}"]
        for volume, ctr_dir in spec.volumes:
            argv += ["--volume", f"{volume}:{ctr_dir}"]
        for k, v in sorted(spec.env.items()):
            argv += ["--env", f"{k}={v}"]
        return argv + [spec.image, *spec.command]

    def start(self, spec: ContainerSpec) -> None:
        r = self._cli(*self.run_argv(spec)[1 + len(self.global_args) :])
        self.ids[spec.name] = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        if spec.network_mode:
            mode, run_id = self.own_mode(spec.network_mode), spec.labels[ovs.RUN_LABEL]
            self.attached[spec.name] = (mode, run_id)
            if mode == "ovs":
                ovs.OvsSwitch(run_id).attach_netns(spec.name, self.netns_pid(spec.name))

    # -- network modes (the network study) --------------------------------------------------
    def own_mode(self, network_mode: str) -> str:
        """The part of a network mode this engine's containers get (nested: the child's)."""
        return network_mode

    def _bridge_addresses(self, name: str) -> tuple[str, str]:
        fmt = "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{.Gateway}}{{end}}"
        address, gateway = self._cli("inspect", "--format", fmt, name).stdout.split()
        return address, gateway

    def entity_address(self, name: str) -> str:
        mode, run_id = self.attached[name]
        if mode == "ovs":
            return ovs.OvsSwitch(run_id).address_of(name)
        return LOOPBACK if mode == "host" else self._bridge_addresses(name)[0]

    def host_address(self, name: str) -> str:
        mode, run_id = self.attached[name]
        if mode == "ovs":
            return ovs.OvsSwitch(run_id).gateway()
        return LOOPBACK if mode == "host" else self._bridge_addresses(name)[1]

    def netns_pid(self, name: str) -> int:
        return int(self._cli("inspect", "--format", "{{.State.Pid}}", name).stdout)

    def entity_pid(self, name: str) -> int | None:
        """A process of the container from its cgroup folder (named by its id, under the engine's
        parent or a systemd scope): no CLI call, which would load the machine in the first
        moments of a Case 1 iteration; the CLI only where the folder is not found."""
        cid = self.ids.get(name)
        if cid:
            # cgroup v1 (docker/<id>, libpod_parent/libpod-<id>, system.slice/docker-<id>.scope), then v2.
            for pattern in (f"memory/*/*{cid}*", f"*/*{cid}*"):
                for folder in cgroups.ROOT.glob(pattern):
                    pids = (folder / "cgroup.procs").read_text().split()
                    if pids:
                        return int(pids[0])
        return super().entity_pid(name)

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
        return removed + ovs.remove_labelled(label, value)

    def create_network(self, name: str, labels: dict) -> None:
        self._cli("network", "create", *[f"--label={k}={v}" for k, v in labels.items()], name)

    def create_volume(self, name: str, labels: dict) -> None:
        self._cli("volume", "create", *[f"--label={k}={v}" for k, v in labels.items()], name)
