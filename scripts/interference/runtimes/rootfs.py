"""Root file systems exported from Docker's images, for the runtimes that run the very same
binaries without a container engine (bare metal, LXC, the virtual machine's disk).

One folder per image, under the runtime's `rootfs_dir`; a marker file written last, so that a
half-exported tree is never used."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

COMPLETE = ".interference-complete"


def folder_of(rootfs_dir: Path, ref: str) -> Path:
    return Path(rootfs_dir) / ref.replace("/", "_").replace(":", "_")


def is_complete(folder: Path) -> bool:
    return (folder / COMPLETE).exists()


def export(source: dict, folder: Path, log: Path) -> None:
    """Docker's image `source` ({"id", "ref"}) unpacked into `folder` (replaced if there)."""
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


def tool_versions(folder: Path) -> dict:
    """The versions each microservice's install.sh recorded in the tree."""
    out = {}
    for path in sorted((folder / "opt" / "microservices").glob("*/versions.txt")):
        out.update(dict(line.split(" ", 1) for line in path.read_text().splitlines() if " " in line))
    return out


def ensure(source: dict, rootfs_dir: Path, ref: str, log: Path) -> Path:
    """The exported tree for `ref`: exported unless already there for the same image id (bare
    metal, LXC and the VM disks share it)."""
    folder = folder_of(rootfs_dir, ref)
    if not (is_complete(folder) and (folder / COMPLETE).read_text().strip() == source["id"]):
        export(source, folder, log)
    return folder


class ExportedTreeImages:
    """The image methods of a runtime whose image is the exported tree itself (bare metal, LXC):
    its `rootfs_dir` attribute says where the trees are."""

    rootfs_dir: Path

    def image_id(self, ref: str) -> str | None:
        folder = folder_of(self.rootfs_dir, ref)
        return f"rootfs:{folder}" if is_complete(folder) else None

    def convert(self, source: dict, ref: str, log: Path) -> str:
        return f"rootfs:{ensure(source, self.rootfs_dir, ref, log)}"

    def tool_versions(self, ref: str) -> dict:
        return tool_versions(folder_of(self.rootfs_dir, ref))
