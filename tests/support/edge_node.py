"""Node `edge` of the local Slurm cluster (slurm_local.py): a container made on this machine with
its own Docker engine, munge and slurmd, it and every container its engine starts confined to a
host cgroup of the cores CPUSET and MEMORY bytes (paper 004's edge device; the nested runtime's
flags, which are what an engine inside a container needs here: --privileged is refused).

It sees the folders a job needs at the paths they have here (bind mounts): the repository (with
its venv), the Python the venv was made from, the working folders given, and the cluster's state
folder. Its engine cannot reach a mirror (no NAT inside), so the images its runs use are copied
into it from this machine's engine (saved and loaded: ids unchanged), as the images a node
already holds; the pipeline's build step on the node then finds them (recorded as reused).
Its runs take this machine's measurement lock (the file bind-mounted at its path; share_lock):
the node is this machine's cores, so its measurements must not overlap this machine's.
Everything it made (the container, its engine's volume, the cgroups) is removed by stop()."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
import time
from pathlib import Path

from interference import REPO_ROOT
from interference.host.locks import LOCK_PATH

CONTEXT = REPO_ROOT / "containers" / "slurm-node"
LABEL = "interference.slurm-node"


def _docker(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, **kw)


SYSTEM_PREFIXES = (Path("/usr"), Path("/usr/local"), Path("/"))


def python_mounts() -> list[Path]:
    """What a node mounts to run this machine's Python at its own paths: a venv outside the
    repository (setup-python's tool cache) and the base installation. A base in the system's
    /usr (Debian's python3, a venv made from it) gives its interpreter and standard library
    only: all of /usr would hide the node's own /usr (its entrypoint, Docker, Slurm)."""
    base, prefix = Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()
    out = [] if prefix == base or prefix.is_relative_to(REPO_ROOT) else [prefix]
    if base not in SYSTEM_PREFIXES:
        return [*out, base]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [*out, (base / "bin" / version).resolve(), base / "lib" / version]


class EdgeNode:
    def __init__(
        self,
        name: str = "edge",
        cpuset: str = "1",
        memory: int = 4 << 30,
        shared: list[Path] = (),
        preload: list[str] = (),
        base_image: str = "debian:bookworm-slim",
        share_lock: bool = True,
    ):
        self.name, self.cpuset, self.memory = name, cpuset, memory
        self.share_lock = share_lock
        self.shared = [Path(p).resolve() for p in shared]
        self.preload = list(preload)
        self.base_image = base_image
        self.container = f"interference-node-{name}"
        self.group = f"interference-node-{name}"

    @property
    def cpus(self) -> int:
        count = 0
        for part in self.cpuset.split(","):
            lo, _, hi = part.partition("-")
            count += int(hi or lo) - int(lo) + 1
        return count

    def image(self) -> str:
        """The node image (containers/slurm-node on the base image), built once per content."""
        h = hashlib.sha256(self.base_image.encode())
        for f in sorted(CONTEXT.iterdir()):
            h.update(f.name.encode() + f.read_bytes())
        ref = f"interference/slurm-node:{h.hexdigest()[:12]}"
        if _docker("image", "inspect", ref).returncode != 0:
            r = _docker(
                "build", "-q", "-t", ref, "--build-arg", f"BASE_IMAGE={self.base_image}", str(CONTEXT)
            )
            if r.returncode != 0:
                raise RuntimeError(f"building {ref} failed: {r.stderr.strip()[-2000:]}")
        return ref

    def start(self, etc: Path, munge_key: Path, state: list[Path]) -> None:
        """The container up with its engine answering and the images loaded (slurmd not yet:
        the cluster's config needs this node's address first)."""
        image = self.image()
        self.stop()
        for c in ("cpuset", "cpu", "memory"):
            Path(f"/sys/fs/cgroup/{c}/{self.group}").mkdir(exist_ok=True)
        mems = Path("/sys/fs/cgroup/cpuset/cpuset.mems").read_text().strip()
        Path(f"/sys/fs/cgroup/cpuset/{self.group}/cpuset.mems").write_text(mems)
        Path(f"/sys/fs/cgroup/cpuset/{self.group}/cpuset.cpus").write_text(self.cpuset)
        Path(f"/sys/fs/cgroup/memory/{self.group}/memory.limit_in_bytes").write_text(str(self.memory))
        python = python_mounts()
        mounts = [REPO_ROOT, *python, *state, *self.shared]
        argv = ["run", "-d", "--name", self.container, "--hostname", self.name, "--label", f"{LABEL}={self.name}",
                "--cgroup-parent", f"/{self.group}", "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
                "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
                "--security-opt", "systempaths=unconfined", "--cgroupns", "host",
                "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", "-v", "/var/lib/docker",
                "-v", f"{etc}:/etc/slurm:ro", "-v", f"{munge_key}:/run/host-munge.key:ro"]  # fmt: skip
        for m in dict.fromkeys(mounts):
            argv += ["-v", f"{m}:{m}" + (":ro" if m == REPO_ROOT or m in python else "")]
        if self.share_lock:
            Path(LOCK_PATH).touch()  # a missing source would be made a folder
            argv += ["-v", f"{LOCK_PATH}:{LOCK_PATH}"]
        r = _docker(*argv, image, f"/{self.group}/inner")
        if r.returncode != 0:
            raise RuntimeError(f"starting node {self.name} failed: {r.stderr.strip()}")
        deadline = time.time() + 60
        while self.exec("docker", "info").returncode != 0:
            if time.time() > deadline:
                raise RuntimeError(f"the engine of node {self.name} did not answer within 60 s")
            time.sleep(1)
        if self.preload:
            save = subprocess.Popen(["docker", "save", *self.preload], stdout=subprocess.PIPE)
            load = subprocess.run(["docker", "exec", "-i", self.container, "docker", "load"],
                                  stdin=save.stdout, capture_output=True, text=True)  # fmt: skip
            save.stdout.close()
            if save.wait() != 0 or load.returncode != 0:
                raise RuntimeError(f"copying images into node {self.name} failed: {load.stderr.strip()}")

    def exec(self, *argv: str) -> subprocess.CompletedProcess:
        return _docker("exec", self.container, *argv)

    def _inspect(self, field: str) -> str:
        return _docker("inspect", "-f", "{{.NetworkSettings." + field + "}}", self.container).stdout.strip()

    def address(self) -> str:
        return self._inspect("IPAddress")

    def gateway(self) -> str:
        """This machine's address on the node's bridge."""
        return self._inspect("Gateway")

    def start_slurmd(self) -> None:
        """slurmd on the node (nothing when it runs already; a killed one stays a zombie here,
        where PID 1 is the engine, which reaps no one)."""
        states = self.exec("ps", "-C", "slurmd", "-o", "stat=").stdout.split()
        if any(not s.startswith("Z") for s in states):
            return
        r = self.exec("slurmd", "-N", self.name)
        if r.returncode != 0:
            raise RuntimeError(f"slurmd on node {self.name} did not start: {r.stderr.strip()}")

    def use_munge_key(self, key: bytes) -> None:
        """munged and slurmd restarted with `key` (another than the controller's: the node can no
        longer talk to it; the controller's again: it can)."""
        self.exec("pkill", "-KILL", "-x", "slurmd")
        self.exec("pkill", "-x", "munged")
        write = ["docker", "exec", "-i", self.container, "sh", "-c",
                 "cat > /etc/munge/munge.key && chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key"]  # fmt: skip
        subprocess.run(write, input=key, check=True, capture_output=True)
        deadline = time.time() + 10
        while self.exec("pgrep", "-x", "munged").returncode == 0 and time.time() < deadline:
            time.sleep(0.2)
        self.exec("runuser", "-u", "munge", "--", "munged")
        self.start_slurmd()

    def lose(self) -> None:
        """The node lost mid-job: its slurmd, its job steps and what they ran (snakemake, the
        runner) killed at once; the containers its engine runs are left, as a crash leaves them."""
        self.exec("pkill", "-KILL", "-f", r"slurm|snakemake|interference\.steps\.runner")

    def stop(self) -> None:
        _docker("rm", "-f", "-v", self.container)
        # Its engine made the group (and children) in every controller, not only the three limited.
        deadline = time.time() + 20
        while (left := list(Path("/sys/fs/cgroup").glob(f"*/{self.group}"))) and time.time() < deadline:
            for d in left:
                for sub in sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [d]:
                    # Not yet empty (its tasks are leaving), or gone through another path.
                    with contextlib.suppress(OSError):
                        sub.rmdir()
            time.sleep(0.2)
