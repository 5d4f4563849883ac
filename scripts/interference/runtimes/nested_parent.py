"""The nested runtime's parent containers (runtimes/nested.py): the flags a parent is started
with, its image, the engine inside it (awaited, given an image by `docker save | docker load`,
NAT for its children), the pre-loaded data roots made once per image, and the removal of parents
with their children and the cgroups their engines leave. Apart from the adapter (nested.py),
which runs the children through the parent's CLI: this is the machinery of the parent itself."""

from __future__ import annotations

import hashlib
import subprocess
import time
from pathlib import Path

from interference import REPO_ROOT
from interference.host import cgroups
from interference.runtimes.base import RuntimeUnavailable
from interference.runtimes.docker import DockerRuntime

PARENT_CONTEXT = REPO_ROOT / "containers" / "nested-parent"
CGROUP_PARENT = "interference-nested"
ENGINE_READY_S = 90.0


def parent_flags() -> list[str]:
    """What the parent container is given: what nested Docker needs here, and no more."""
    return [
        "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
        "--security-opt", "seccomp=unconfined",
        "--security-opt", "apparmor=unconfined",
        "--security-opt", "systempaths=unconfined",
        "--cgroupns", "host",
        "--volume", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
    ]  # fmt: skip


class NestedParents:
    """The parent methods of the nested runtime. The adapter gives the host's engine (`outer`), its
    options (`settings`) and `_cli`, the Docker CLI inside the run's parent."""

    outer: DockerRuntime
    settings: dict

    # -- the parent image, and the child image where the parent finds it ---------------------
    def parent_ref(self, base: dict) -> str:
        h = hashlib.sha256(base["id"].encode())
        for f in sorted(PARENT_CONTEXT.iterdir()):
            h.update(f.name.encode() + f.read_bytes())
        return f"interference/nested-parent:{h.hexdigest()[:12]}"

    def _preloaded(self, image_id: str) -> Path:
        return Path(self.settings["preloaded_dir"]) / image_id.removeprefix("sha256:")[:16]

    def _parent_image(self) -> str:
        """The newest parent image (`docker images` lists newest first): the last one built."""
        r = self.outer._cli("images", "--format", "{{.Repository}}:{{.Tag}}", "interference/nested-parent")
        refs = r.stdout.split()
        if not refs:
            raise RuntimeUnavailable(
                "no parent image: build the nested runtime's images first (snakemake does)"
            )
        return refs[0]

    def _make_preloaded(self, image_id: str, parent: str, log: Path) -> None:
        """A data root that holds the image: an engine in a parent loads it there, then stops."""
        root = self._preloaded(image_id)
        if (root / "image").is_dir():
            return
        root.mkdir(parents=True, exist_ok=True)
        name = f"interference-nested-preload-{image_id.removeprefix('sha256:')[:12]}"
        storage = self.settings["storage_driver"]
        self.outer._cli("rm", "-f", name, check=False)
        self.outer._cli(
            "run", "--detach", "--name", name, *parent_flags(), "--volume", f"{root}:/var/lib/docker",
            parent, f"/{CGROUP_PARENT}/{name}", storage,
        )  # fmt: skip
        try:
            self._wait_for_engine(name)
            with open(log, "a") as f:
                f.write(f"$ docker save {image_id} | docker exec -i {name} docker load  (into {root})\n")
            self._load(name, image_id)
        finally:
            self.outer._cli("stop", "--time", "30", name, check=False)
            self.outer._cli("rm", "-f", "-v", name, check=False)
            _remove_child_cgroups(name)

    # -- a parent's engine ------------------------------------------------------------------
    def _wait_for_engine(self, parent: str) -> float:
        t0 = time.time()
        while time.time() - t0 < ENGINE_READY_S:
            if self.outer._cli("exec", parent, "docker", "info", check=False).returncode == 0:
                return time.time() - t0
            if self.outer._cli("inspect", "--format", "{{.State.Running}}", parent).stdout.strip() != "true":
                break
            time.sleep(0.2)
        logs = self.outer.logs(parent)[-2000:]
        raise RuntimeUnavailable(f"the engine in the parent container {parent} did not start:\n{logs}")

    def _load(self, parent: str, image_id: str) -> None:
        save = subprocess.Popen(["docker", "save", image_id], stdout=subprocess.PIPE)
        r = subprocess.run(
            ["docker", "exec", "-i", parent, "docker", "load"],
            stdin=save.stdout,
            capture_output=True,
            text=True,
        )
        if save.wait() != 0 or r.returncode != 0:
            raise RuntimeError(f"loading {image_id} into {parent} failed: {r.stderr.strip()}")

    def _masquerade_children(self, parent: str) -> None:
        """NAT for the children's bridge inside the parent (its engine runs with --iptables=false,
        so that it leaves the host's rules alone): children reach the host by the parent's address."""
        fmt = "{{(index .IPAM.Config 0).Subnet}}"
        subnet = self._cli("network", "inspect", "bridge", "--format", fmt).stdout.strip()
        rule = f"iptables -t nat -A POSTROUTING -s {subnet} ! -o docker0 -j MASQUERADE".split()
        self.outer._cli("exec", parent, *rule)

    # -- removal: the children, then the parent, then its engine's cgroups --------------------
    def _remove_parents(self, parents: list[str]) -> list[str]:
        removed = []
        for pid in parents:
            name = self.outer._cli("inspect", "--format", "{{.Name}}", pid).stdout.strip().lstrip("/")
            # The inner engine removes its containers and their cgroups; then the parent goes.
            inner = self.outer._cli("exec", pid, "docker", "ps", "-aq", check=False).stdout.split()
            if inner:
                self.outer._cli("exec", pid, "docker", "rm", "-f", "-v", *inner, check=False, timeout=120)
                removed += [f"child container {i}" for i in inner]
            self.outer._cli("rm", "-f", "-v", pid)
            removed.append(f"parent container {name}")
            removed += [f"cgroup {p}" for p in _remove_child_cgroups(name)]
        return removed


def _remove_child_cgroups(parent: str) -> list[Path]:
    """The cgroups the parent's engine made under /interference-nested/<parent>, in every
    hierarchy (blkio, pids, devices... too, not only the limited ones), deepest first: a killed
    parent's engine could not remove them."""
    tops = sorted(cgroups.ROOT.glob(f"*/{CGROUP_PARENT}/{parent}")) + [cgroups.ROOT / CGROUP_PARENT / parent]
    removed = []
    for top in tops:
        if not top.is_dir():
            continue
        for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [top]:
            try:
                d.rmdir()
                removed.append(d)
            except FileNotFoundError:
                pass  # the same hierarchy under another name (a symlink such as cpu -> cpu,cpuacct)
    return removed
