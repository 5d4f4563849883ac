"""The vm runtime's guest image: what a guest boots (runtimes/vm.py). A virtio disk made from the
Docker image's exported root file system (runtimes/rootfs.py) with the guest's init and busybox
added, and an initramfs of our own per kernel: Debian's static busybox, containers/vm/initramfs-init
and the kernel's virtio, ext4 and 9p modules, decompressed on the host (busybox insmod loads only
plain .ko files). Kept apart from the adapter (vm.py) and the guests' qemu processes
(vm_lifecycle.py): this is build-time work, done once per image and kernel."""

from __future__ import annotations

import glob
import gzip
import hashlib
import lzma
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from interference import REPO_ROOT
from interference.runtimes import rootfs, vm_kernel
from interference.runtimes.base import RuntimeUnavailable

GUEST_INIT = REPO_ROOT / "containers" / "vm" / "init"
INITRAMFS_INIT = REPO_ROOT / "containers" / "vm" / "initramfs-init"
GUEST_DIR = "opt/interference-vm"  # in the guest's root file system
# What the initramfs loads: the virtio root disk and ext4, 9p for the shares, virtio_net for
# networks; their dependencies are found by modprobe on the host.
GUEST_MODULES = ("virtio_pci", "virtio_blk", "ext4", "9pnet_virtio", "9p", "virtio_net")


def newest(pattern: str) -> str | None:
    """The file with the highest version in its name (6.10 after 6.9, unlike a string sort)."""

    def version(path: str) -> list:
        return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+~_]", Path(path).name)]

    found = sorted(glob.glob(pattern), key=version)
    return found[-1] if found else None


class VmImages:
    """The image methods of the vm runtime: a disk per image and the initramfs of its kernel, under
    `disk_dir`; the exported trees under `rootfs_dir`; `kernel_version` the guest kernel's."""

    disk_dir: Path
    rootfs_dir: Path
    kernel: str
    kernel_version: str
    _kernel_booted: str | None = None

    def _disk(self, ref: str) -> Path:
        return self.disk_dir / (rootfs.folder_of(Path("/"), ref).name + ".img")

    def image_id(self, ref: str) -> str | None:
        disk = self._disk(ref)
        return f"vmdisk:{disk}" if disk.with_suffix(".complete").exists() else None

    def convert(self, source: dict, ref: str, log: Path) -> str:
        tree = rootfs.ensure(source, self.rootfs_dir, ref, log)
        disk = self._disk(ref)
        disk.parent.mkdir(parents=True, exist_ok=True)
        staging = disk.with_suffix(".staging")
        shutil.rmtree(staging, ignore_errors=True)
        with open(log, "a") as f:
            # Hard links: the exported tree stays as it is; the guest's files are added beside.
            subprocess.run(["cp", "-al", str(tree), str(staging)], check=True, stderr=f)
            guest = staging / GUEST_DIR
            guest.mkdir(parents=True)
            shutil.copy(GUEST_INIT, guest / "init")
            shutil.copy(shutil.which("busybox"), guest / "busybox")
            self._make_initramfs(f)
            used = int(
                subprocess.run(["du", "-sm", str(staging)], capture_output=True, text=True).stdout.split()[0]
            )
            size_mb = int(used * 1.2) + 512  # room for what a guest writes (a snapshot anyway)
            f.write(f"$ mkfs.ext4 -d {staging} {disk} {size_mb}M\n")
            f.flush()
            disk.unlink(missing_ok=True)
            subprocess.run(
                ["mkfs.ext4", "-q", "-F", "-L", "root", "-d", str(staging), str(disk), f"{size_mb}M"],
                check=True,
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        shutil.rmtree(staging)
        disk.with_suffix(".complete").write_text(source["id"] + "\n")
        return f"vmdisk:{disk}"

    def _boot_kernel(self) -> str:
        """What -kernel gets: the kernel uncompressed at its PVH entry where it has one (vm_kernel.py)."""
        if self._kernel_booted is None:
            self._kernel_booted = vm_kernel.boot_kernel(self.kernel, self.disk_dir)
        return self._kernel_booted

    def _initramfs(self) -> Path:
        # The tag: archives made before modules were decompressed are not reused.
        digest = hashlib.sha256(INITRAMFS_INIT.read_bytes() + b"plain .ko").hexdigest()[:12]
        return self.disk_dir / f"initramfs-{self.kernel_version}-{digest}.cpio.gz"

    def _make_initramfs(self, log) -> None:
        """busybox, the modules and /init as a gzipped newc cpio archive (once per kernel)."""
        out = self._initramfs()
        if out.exists():
            return
        with tempfile.TemporaryDirectory(prefix="interference-initramfs-") as tmp:
            root = Path(tmp)
            (root / "bin").mkdir()
            (root / "modules").mkdir()
            shutil.copy(shutil.which("busybox"), root / "bin" / "busybox")
            shutil.copy(INITRAMFS_INIT, root / "init")
            order = self._copy_modules(root / "modules")
            log.write(f"initramfs {out}: modules {' '.join(order)}\n")
            files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
            cpio = subprocess.run(
                ["cpio", "-o", "-H", "newc", "--quiet"], input="\n".join(files).encode(), cwd=root,
                capture_output=True, check=True,
            )  # fmt: skip
        tmp_out = out.with_suffix(".tmp")
        tmp_out.write_bytes(gzip.compress(cpio.stdout))
        tmp_out.rename(out)

    def _copy_modules(self, dest: Path) -> list[str]:
        """The guest kernel's modules of GUEST_MODULES with their dependencies, in load order."""
        paths, lacking = guest_modules(self.kernel_version)
        if lacking:
            raise RuntimeUnavailable(f"The virtual-machine runtime (vm) needs {lacking}.")
        return copy_modules(paths, dest)


def guest_modules(kernel_version: str) -> tuple[list[Path], str]:
    """The files of GUEST_MODULES and their dependencies in load order, as modprobe resolves them on
    the host (built-in ones need none), and what is lacking to put them in an initramfs ("": nothing)."""
    r = subprocess.run(
        ["modprobe", "-S", kernel_version, "-a", "--show-depends", *GUEST_MODULES],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        return [], (
            f"kernel {kernel_version}'s modules {', '.join(GUEST_MODULES)} ({r.stderr.strip()}; a cloud "
            "kernel may lack some: Debian's linux-image-amd64 or Ubuntu's linux-image-generic has them, "
            "or name another kernel with the vm runtime's `kernel` option)"
        )
    paths: list[Path] = []
    for line in r.stdout.splitlines():
        if line.startswith("insmod ") and (path := Path(line.split()[1])) not in paths:
            paths.append(path)
    if any(p.suffix == ".zst" for p in paths) and shutil.which("zstd") is None:
        return paths, f"the `zstd` command (apt-get install zstd): {ZSTD_WHY}"
    return paths, ""


# Why compressed modules are decompressed on the host.
ZSTD_WHY = (
    "the guest kernel's modules are zstd-compressed, and the initramfs's busybox insmod loads only plain ones"
)


def plain_module(path: Path) -> tuple[str, bytes]:
    """A module file's uncompressed name and bytes. Ubuntu's and newer Debian kernels ship .ko.zst,
    .ko.xz or .ko.gz, which busybox insmod cannot load; Python has xz and gzip, zstd is a command."""
    data, suffix = path.read_bytes(), path.suffix
    if suffix == ".xz":
        data = lzma.decompress(data)
    elif suffix == ".gz":
        data = gzip.decompress(data)
    elif suffix == ".zst":
        if shutil.which("zstd") is None:
            raise RuntimeUnavailable(f"{path} needs the `zstd` command (apt-get install zstd): {ZSTD_WHY}.")
        data = subprocess.run(["zstd", "-dcq", str(path)], capture_output=True, check=True).stdout
    else:
        return path.name, data
    return path.name.removesuffix(suffix), data


def copy_modules(paths: list[Path], dest: Path) -> list[str]:
    """The modules into dest, uncompressed, and their load order (dest/order, which
    containers/vm/initramfs-init reads)."""
    order = []
    for path in paths:
        name, data = plain_module(path)
        if name not in order:
            (dest / name).write_bytes(data)
            order.append(name)
    (dest / "order").write_text("\n".join(order) + "\n")
    return order
