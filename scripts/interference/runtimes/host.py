"""Bare metal (`host`): the same benchmark binaries as the containers, without container
namespaces, under cgroup limits the runner makes itself.

Images are the Docker images' root file systems (exported once into `rootfs_dir`), so
"container vs bare metal" compares identical binaries. A command runs chrooted into that
tree with the host's network, PID, IPC, UTS and user namespaces; only a private mount
namespace (`unshare --mount`) makes the results folder, scratch volumes, /proc, /sys and /dev
visible inside, and takes those mounts away when the command exits. Its process joins its
own cgroup (runtimes/cgroups.py: v1 or v2) before it starts. No private networks: a study
needing them is refused for this runtime."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from interference.runtimes import cgroups
from interference.runtimes.base import (
    LIMIT_KINDS,
    Capabilities,
    ContainerRuntime,
    ContainerSpec,
    RuntimeUnavailable,
)

PATH_IN_ROOTFS = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
COMPLETE = ".interference-complete"  # written last: a half-exported tree is never used


class HostRuntime(ContainerRuntime):
    name = "host"
    capabilities = Capabilities(
        networks=False,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="root file system (exported from the Docker image)",
        image_from="docker",
    )
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rootfs_dir": {"type": "string", "default": "/var/lib/interference/rootfs"},
            "state_dir": {
                "type": "string",
                "default": "/var/lib/interference/host",
                "description": "logs, labels and scratch volumes of the commands it runs",
            },
        },
    }

    def __init__(self, **options):
        super().__init__(**options)
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        self.rootfs_dir, self.state_dir = Path(o["rootfs_dir"]), Path(o["state_dir"])
        self.procs: dict[str, subprocess.Popen] = {}

    # -- itself ----------------------------------------------------------------------------
    def check(self) -> None:
        missing = []
        if os.geteuid() != 0:
            missing.append("root (it makes cgroups, mounts and chroots)")
        missing += [f"the `{t}` command" for t in ("unshare", "chroot", "mount") if shutil.which(t) is None]
        v = cgroups.version()
        writable = [cgroups.ROOT] if v == 2 else [cgroups.ROOT / c for c in cgroups.V1_CONTROLLERS]
        missing += [f"write access to {p}" for p in writable if not os.access(p, os.W_OK)]
        if missing:
            raise RuntimeUnavailable(
                "The bare-metal runtime (host) needs " + ", ".join(missing) + ". Run as root on a machine "
                "whose cgroup file system is mounted read-write, or leave `host` out of the config's runtimes."
            )

    def describe(self) -> dict:
        uname = os.uname()
        return {
            "runtime": self.name,
            "engine": "bare metal (chroot + cgroups, no container namespaces)",
            "version": uname.release,
            "cgroup_version": str(cgroups.version()),
            "cgroup_driver": "cgroupfs (made by the runner)",
            "storage_driver": "root file system folder",
            "kernel": uname.release,
            "os": uname.sysname,
        }

    # -- images: Docker's, exported ---------------------------------------------------------
    def _rootfs(self, ref: str) -> Path:
        return self.rootfs_dir / ref.replace("/", "_").replace(":", "_")

    def image_id(self, ref: str) -> str | None:
        folder = self._rootfs(ref)
        return f"rootfs:{folder}" if (folder / COMPLETE).exists() else None

    def convert(self, source: dict, ref: str, log: Path) -> str:
        folder = self._rootfs(ref)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        with open(log, "a") as f:
            f.write(f"$ docker create {source['id']}; docker export | tar -x -C {folder}\n")
            f.flush()
            cid = subprocess.run(
                ["docker", "create", source["id"], "true"], check=True, capture_output=True, text=True
            ).stdout.strip()
            try:
                export = subprocess.Popen(["docker", "export", cid], stdout=subprocess.PIPE, stderr=f)
                subprocess.run(
                    ["tar", "--numeric-owner", "-x", "-C", str(folder)], stdin=export.stdout, check=True
                )
                if export.wait() != 0:
                    raise RuntimeError(f"docker export of {source['ref']} failed; see {log}")
            finally:
                subprocess.run(["docker", "rm", "-f", cid], capture_output=True)
        (folder / COMPLETE).write_text(source["id"] + "\n")
        return f"rootfs:{folder}"

    def tool_versions(self, ref: str) -> dict:
        out = {}
        for path in sorted((self._rootfs(ref) / "opt" / "microservices").glob("*/versions.txt")):
            out.update(dict(line.split(" ", 1) for line in path.read_text().splitlines() if " " in line))
        return out

    # -- runs --------------------------------------------------------------------------------
    def _volume_dir(self, name: str) -> Path:
        return self.state_dir / "volumes" / name

    def _script(self, spec: ContainerSpec) -> str:
        """The shell that runs in the private mount namespace: mounts, then chroot."""
        root = shlex.quote(spec.image.removeprefix("rootfs:"))
        lines = [
            "set -e",
            f"mount -t proc proc {root}/proc",
            f"mount --rbind /sys {root}/sys",
            f"mount --rbind /dev {root}/dev",
            f"mount -t tmpfs tmpfs {root}/tmp",  # the image's /tmp stays as exported
        ]
        mounts = [(str(Path(h).resolve()), c) for h, c in spec.binds]
        mounts += [(str(self._volume_dir(v)), c) for v, c in spec.volumes]
        for host_dir, ctr_dir in mounts:
            lines += [
                f"mkdir -p {root}{shlex.quote(ctr_dir)}",
                f"mount --bind {shlex.quote(host_dir)} {root}{shlex.quote(ctr_dir)}",
            ]
        env = ["env", "-i", f"PATH={PATH_IN_ROOTFS}", "HOME=/root"] + [
            f"{k}={v}" for k, v in sorted(spec.env.items())
        ]
        lines.append("exec chroot " + root + " " + shlex.join(env + spec.command))
        return "\n".join(lines)

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", self._script(spec)]

    def start(self, spec: ContainerSpec) -> None:
        if spec.network:
            raise RuntimeUnavailable("the bare-metal runtime has no private networks")
        (self.state_dir / "commands").mkdir(parents=True, exist_ok=True)
        (self.state_dir / "commands" / f"{spec.name}.json").write_text(json.dumps({"labels": spec.labels}))
        folders = cgroups.create(spec.name, spec.cpuset, spec.cpus, spec.memory)
        log = open(self.state_dir / "commands" / f"{spec.name}.log", "w")
        # Joins its cgroups between fork and exec: no instruction runs outside the limits.
        self.procs[spec.name] = subprocess.Popen(
            self.run_argv(spec),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: cgroups.join(folders, os.getpid()),
        )
        log.close()

    def wait(self, name: str, timeout_s: float) -> int | None:
        try:
            return self.procs[name].wait(timeout=max(timeout_s, 1))
        except subprocess.TimeoutExpired:
            return None

    def logs(self, name: str) -> str:
        path = self.state_dir / "commands" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def remove(self, name: str) -> None:
        cgroups.kill_and_remove(name)
        if name in self.procs:
            self.procs.pop(name).wait()
        for suffix in (".json", ".log"):
            (self.state_dir / "commands" / f"{name}{suffix}").unlink(missing_ok=True)

    def _labelled(self, kind: str, label: str, value: str) -> list[str]:
        folder = self.state_dir / kind
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if json.loads(path.read_text())["labels"].get(label) == value:
                found.append(path.stem)
        return found

    def remove_labelled(self, label: str, value: str) -> list[str]:
        removed = []
        for name in self._labelled("commands", label, value):
            self.remove(name)
            removed.append(f"command {name} (its cgroups)")
        for name in self._labelled("volumes", label, value):
            shutil.rmtree(self._volume_dir(name), ignore_errors=True)
            (self.state_dir / "volumes" / f"{name}.json").unlink()
            removed.append(f"volume {name}")
        return removed

    def create_volume(self, name: str, labels: dict) -> None:
        self._volume_dir(name).mkdir(parents=True)
        (self.state_dir / "volumes" / f"{name}.json").write_text(json.dumps({"labels": labels}))

    def address_of(self, name: str) -> str:
        return "127.0.0.1"
