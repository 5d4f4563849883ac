"""A KVM virtual machine (`vm`) per container: Debian's qemu-system-x86, a Debian kernel booted
directly (/boot/vmlinuz-*, package linux-image-amd64) with an initramfs of our own (Debian's
static busybox and that kernel's virtio, ext4 and 9p modules: containers/vm/initramfs-init), and
a virtio disk made from the Docker image's root file system (runtimes/rootfs.py) with the
guest's init added (containers/vm/init, plumbing with the same busybox). The disk is shared by every guest of an image, opened with snapshot=on: each
guest's writes are thrown away when it stops, as a container's upper layer is.

Limits are the machine's: vCPUs = the cores of the cpuset (or the CPU quota rounded up), and
the guest's RAM = the memory limit; the qemu process itself runs in a host cgroup with that
cpuset and quota (runtimes/cgroups.py), so a vCPU runs only where a container would. The
guest reads its limits back like a container does (nproc, MemTotal, its cgroups).

Acceleration: KVM where /dev/kvm runs a stock kernel. On the Firecracker VMs this was built
on, /dev/kvm is PVM (kvm_pvm: pagetable-based nested virtualisation), which boots only
PVM-enabled guest kernels; a Debian kernel hangs there at its first instruction. `accel: auto`
then uses QEMU's TCG (software emulation), recorded with its reason: it runs every guest for
real, but its CPU speed is not a VM's, so vm/bare-metal ratios measured so are not overheads.

Each guest boots once per container the study starts: Case 1's fresh container per iteration
is a fresh VM per iteration (the report says so). The host talks to a guest through a 9p
control folder: run.sh (command and environment), mounts, net in; ready, exit_code out; the
console is the container's log. Results and binds are 9p shares, scratch volumes are ext4
disk images, private networks are bridges (runtimes/bridges.py) with a tap per guest."""

from __future__ import annotations

import glob
import gzip
import hashlib
import lzma
import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from interference import REPO_ROOT
from interference.host_package import IPROUTE, IPTABLES, HostPackage, static_busybox
from interference.runtimes import cgroups, ovs, rootfs
from interference.runtimes.base import LIMIT_KINDS, Capabilities, ContainerSpec, RuntimeUnavailable
from interference.runtimes.bridges import BridgedNetworks, Bridges, bridge_name
from interference.runtimes.local_processes import LocalProcessRuntime

GUEST_INIT = REPO_ROOT / "containers" / "vm" / "init"
INITRAMFS_INIT = REPO_ROOT / "containers" / "vm" / "initramfs-init"
GUEST_DIR = "opt/interference-vm"  # in the guest's root file system
# What the initramfs loads: the virtio root disk and ext4, 9p for the shares, virtio_net for
# networks; their dependencies are found by modprobe on the host.
GUEST_MODULES = ("virtio_pci", "virtio_blk", "ext4", "9pnet_virtio", "9p", "virtio_net")
# guest_cgroup: (description, kernel parameters). The guest's init mounts cgroup2 when it sees
# cgroup_no_v1=all (the v1 hierarchies would otherwise hold the controllers).
GUEST_CGROUPS = {
    "v1": ("v1: cpuset, cpu, memory hierarchies", ""),
    "v2": ("v2: unified (cgroup_no_v1=all), every controller enabled", " cgroup_no_v1=all"),
}
PATH_IN_GUEST = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOW_TO_GET = (
    "On Debian: apt-get install qemu-system-x86 linux-image-amd64 busybox-static e2fsprogs cpio, "
    "and a readable and writable /dev/kvm (a machine with virtualisation, or nested KVM)."
)


def parse_cpuset(text: str) -> list[int]:
    cores = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cores += range(int(lo), int(hi or lo) + 1)
    return cores


def guest_shape(spec: ContainerSpec, default_memory: str) -> tuple[int, int]:
    """(vCPUs, MiB of RAM) a container's limits become."""
    if spec.cpuset is not None:
        vcpus = len(parse_cpuset(spec.cpuset))
    elif spec.cpus is not None:
        vcpus = math.ceil(spec.cpus)
    else:
        vcpus = os.cpu_count() or 1
    return vcpus, cgroups.memory_bytes(spec.memory or default_memory) // 1024**2


def guest_mac(name: str) -> str:
    """A locally administered MAC (QEMU's 52:54:00 prefix) of its own for each guest."""
    h = hashlib.sha1(name.encode()).digest()
    return "52:54:00:{:02x}:{:02x}:{:02x}".format(*h[:3])


def newest(pattern: str) -> str | None:
    """The file with the highest version in its name (6.10 after 6.9, unlike a string sort)."""

    def version(path: str) -> list:
        return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+~_]", Path(path).name)]

    found = sorted(glob.glob(pattern), key=version)
    return found[-1] if found else None


class VmRuntime(BridgedNetworks, rootfs.ExportedTreeImages, LocalProcessRuntime):
    name = "vm"
    description = "a QEMU virtual machine per container (under TCG where KVM cannot boot a stock kernel)"
    entity = "vm"
    report_order = 50
    host_packages = (
        HostPackage("qemu-system-x86", "qemu-system-x86_64", "QEMU"),
        # The guest boots the host distribution's kernel (with its modules) directly.
        HostPackage(
            "linux-image-amd64", "/boot/vmlinuz-*", "a kernel for the guests", ubuntu="linux-image-generic"
        ),
        HostPackage("busybox-static", "", "the guests' initramfs tools", present_if=static_busybox),
        HostPackage("cpio", "cpio", "the guests' initramfs"),
        HostPackage("e2fsprogs", "mkfs.ext4", "the guests' disks"),
        IPROUTE,
        IPTABLES,
    )
    capabilities = Capabilities(
        networks=True,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="ext4 virtio disk from the Docker image's root file system",
        image_from="docker",
        network_modes=frozenset({"bridge", "ovs"}),  # a guest has no share of the host's stack
    )
    build_inputs = ("containers/vm/init", "containers/vm/initramfs-init")
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "kernel": {"type": "string", "default": "", "description": "empty: the newest /boot/vmlinuz-*"},
            "accel": {
                "enum": ["auto", "kvm", "tcg"],
                "default": "auto",
                "description": "auto: KVM, unless the host's KVM is PVM (stock kernels hang there): TCG",
            },
            "default_memory": {
                "type": "string",
                "default": "2g",
                "description": "RAM of a guest with no limit",
            },
            "volume_size": {"type": "string", "default": "8g", "description": "sparse ext4 scratch disks"},
            "boot_timeout_s": {"type": "number", "default": 120},
            "cpu_model": {
                "type": "string",
                "default": "host,-arch-capabilities",
                "description": "the host's CPU; nested KVM in a Firecracker VM refuses the "
                "arch-capabilities MSR (qemu aborts), so it is left out",
            },
            "rootfs_dir": {"type": "string", "default": "/var/lib/interference/rootfs"},
            "disk_dir": {"type": "string", "default": "/var/lib/interference/vm/disks"},
            "state_dir": {"type": "string", "default": "/var/lib/interference/vm"},
            "guest_cgroup": {
                "enum": ["v1", "v2"],
                "default": "v1",
                "description": "the guest's cgroups: v1 hierarchies, or the unified v2 one (kernel booted "
                "with cgroup_no_v1=all, cgroup2 mounted by the guest's init), as on most current machines",
            },
        },
    }

    def __init__(self, **options):
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        super().__init__(**o)
        self.o = o
        self.kernel = o["kernel"] or newest("/boot/vmlinuz-*") or ""
        version = Path(self.kernel).name.removeprefix("vmlinuz-")
        self.kernel_version = version
        self.rootfs_dir = Path(o["rootfs_dir"])
        self.disk_dir = Path(o["disk_dir"])
        self.bridges = Bridges(self.state_dir)
        self.attached: dict[str, ovs.OvsSwitch] = {}  # guests on an OVS bridge

    # -- itself ----------------------------------------------------------------------------
    def check(self) -> None:
        missing = []
        tools = ("qemu-system-x86_64", "mkfs.ext4", "modprobe", "ip", "cpio")
        missing += [f"the `{t}` command" for t in tools if shutil.which(t) is None]
        if self.accel()[0] == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
            missing.append("/dev/kvm (KVM: hardware virtualisation, or nested KVM in a VM; or accel: tcg)")
        if not (self.kernel and Path(self.kernel).is_file()):
            missing.append("a kernel (/boot/vmlinuz-*, or the `kernel` option)")
        elif not Path(f"/lib/modules/{self.kernel_version}").is_dir():
            missing.append(f"its modules /lib/modules/{self.kernel_version}")
        elif shutil.which("modprobe") and (lacking := guest_modules(self.kernel_version)[1]):
            missing.append(lacking)
        if not _static_busybox():
            missing.append("a static busybox (Debian's busybox-static) for the guest's plumbing")
        if os.geteuid() != 0:
            missing.append("root (taps, bridges, cgroups)")
        if missing:
            raise RuntimeUnavailable(
                f"The virtual-machine runtime (vm) needs {', '.join(missing)}. {HOW_TO_GET}"
            )

    def accel(self) -> tuple[str, str]:
        """(kvm or tcg, why)."""
        if self.o["accel"] != "auto":
            return self.o["accel"], "set in the config"
        if Path("/sys/module/kvm_pvm").exists():
            return "tcg", "the host's KVM is PVM (kvm_pvm), which boots only PVM guest kernels"
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            return "tcg", "no usable /dev/kvm"
        return "kvm", "/dev/kvm"

    def describe(self) -> dict:
        qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout
        return {
            "runtime": self.name,
            "engine": f"QEMU ({self.accel()[0].upper()})",
            "version": qemu.splitlines()[0].removeprefix("QEMU emulator version ") if qemu else None,
            "cgroup_version": str(cgroups.version()),
            "cgroup_driver": "cgroupfs",
            "storage_driver": "virtio-blk raw disk, snapshot=on",
            "kernel": os.uname().release,
            "os": os.uname().sysname,
            "details": {
                "acceleration": "{} ({})".format(*self.accel()),
                "guest kernel": f"{self.kernel_version}, with the runtime's own initramfs",
                "guests": "one VM per container, booted for it (Case 1: one boot per iteration)",
                "limits": "vCPUs and RAM of the guest; qemu in a host cgroup with the cpuset and quota",
                "guest cgroups": GUEST_CGROUPS[self.o["guest_cgroup"]][0],
            },
        }

    # -- images: a disk from Docker's image ---------------------------------------------------
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

    # -- runs --------------------------------------------------------------------------------
    def _ctl(self, name: str) -> Path:
        return self.state_dir / "guests" / name

    def _tap(self, name: str) -> str:
        return "itt" + bridge_name(name)[3:]

    def _volume_dir(self, name: str) -> Path:
        return self.state_dir / "volumes" / name

    def run_argv(self, spec: ContainerSpec) -> list[str]:
        vcpus, mib = guest_shape(spec, self.o["default_memory"])
        ctl = self._ctl(spec.name)
        accel = self.accel()[0]
        cpu = self.o["cpu_model"] if accel == "kvm" else "max"
        cgroup_args = GUEST_CGROUPS[self.o["guest_cgroup"]][1]
        argv = [
            "qemu-system-x86_64", "-accel", accel, "-cpu", cpu, "-smp", str(vcpus), "-m", f"{mib}M",
            "-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
            "-kernel", self.kernel, "-initrd", str(self._initramfs()),
            "-append", "console=ttyS0 quiet loglevel=3 panic=-1" + cgroup_args,
            "-drive", f"file={spec.image.removeprefix('vmdisk:')},if=virtio,format=raw,snapshot=on",
            "-virtfs", f"local,path={ctl},mount_tag=ctl,security_model=none",
        ]  # fmt: skip
        for i, (host_dir, _) in enumerate(spec.binds):
            argv += ["-virtfs", f"local,path={Path(host_dir).resolve()},mount_tag=b{i},security_model=none"]
        for volume, _ in spec.volumes:
            argv += ["-drive", f"file={self._volume_dir(volume) / 'disk.img'},if=virtio,format=raw"]
        if spec.network or spec.network_mode:
            argv += ["-netdev", f"tap,id=n0,ifname={self._tap(spec.name)},script=no,downscript=no"]
            # QEMU gives every guest the same MAC unless told: two on one bridge would not talk.
            device = f"virtio-net-pci,netdev=n0,mac={guest_mac(spec.name)}"
            if spec.network_mode == "ovs":
                device += ",csum=off,guest_csum=off"  # OVS's userspace datapath fills in no checksums
            argv += ["-device", device]
        return argv

    def _write_ctl(self, spec: ContainerSpec) -> None:
        ctl = self._ctl(spec.name)
        shutil.rmtree(ctl, ignore_errors=True)
        ctl.mkdir(parents=True)
        env = [
            "env",
            "-i",
            f"PATH={PATH_IN_GUEST}",
            "HOME=/root",
            *[f"{k}={v}" for k, v in sorted(spec.env.items())],
        ]
        (ctl / "run.sh").write_text("exec " + shlex.join(env + spec.command) + "\n")
        mounts = [f"9p b{i} {c}" for i, (_, c) in enumerate(spec.binds)]
        # Disks follow the root disk (vda) in the order of the -drive flags.
        mounts += [f"disk /dev/vd{chr(ord('b') + i)} {c}" for i, (_, c) in enumerate(spec.volumes)]
        (ctl / "mounts").write_text("".join(m + "\n" for m in mounts))
        (ctl / "net").write_text(self._attach(spec))

    def _attach(self, spec: ContainerSpec) -> str:
        """The guest's tap on its bridge or OVS; its /ctl/net line: ADDRESS/PREFIX [GATEWAY]."""
        if not (spec.network or spec.network_mode):
            return ""
        tap = self._tap(spec.name)
        subprocess.run(["ip", "tuntap", "add", "dev", tap, "mode", "tap"], check=True, capture_output=True)
        if spec.network_mode == "ovs":
            switch = ovs.OvsSwitch(spec.labels[ovs.RUN_LABEL])
            address, prefix = switch.attach_port(spec.name, tap)
            self.attached[spec.name] = switch
            return f"{address}/{prefix} {switch.gateway()}\n"
        if spec.network_mode == "bridge":
            address, prefix, bridge, gateway = self.own_bridge(spec.name, spec.labels)
        else:
            (address, prefix, bridge), gateway = self.bridges.address_for(spec.network, spec.name), None
        subprocess.run(["ip", "link", "set", tap, "master", bridge, "up"], check=True, capture_output=True)
        return f"{address}/{prefix}" + (f" {gateway}" if gateway else "") + "\n"

    def start(self, spec: ContainerSpec) -> None:
        self._write_ctl(spec)
        # The qemu process (all its vCPU threads) in a cgroup with the cpuset and CPU quota.
        folders = cgroups.create(spec.name, spec.cpuset, spec.cpus, None)
        proc = self._launch(spec, {}, preexec_fn=lambda: cgroups.join(folders, os.getpid()))
        # Booted when init says so: a study's clock starts with the guest, not with qemu.
        deadline = time.time() + self.o["boot_timeout_s"]
        while not (self._ctl(spec.name) / "ready").exists():
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(
                    f"guest {spec.name} did not boot (qemu exit {proc.poll()}):\n{self.logs(spec.name)[-2000:]}"
                )
            time.sleep(0.05)

    def wait(self, name: str, timeout_s: float) -> int | None:
        if super().wait(name, timeout_s) is None:
            return None
        code = self._ctl(name) / "exit_code"
        return int(code.read_text()) if code.exists() else 255  # the guest died before its command ended

    def remove(self, name: str) -> None:
        cgroups.kill_and_remove(name)  # qemu and anything it started
        self._forget(name)
        subprocess.run(["ip", "link", "del", self._tap(name)], capture_output=True)
        shutil.rmtree(self._ctl(name), ignore_errors=True)

    def create_volume(self, name: str, labels: dict) -> None:
        super().create_volume(name, labels)
        disk = self._volume_dir(name) / "disk.img"
        subprocess.run(["truncate", "-s", self.o["volume_size"].upper(), str(disk)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(disk)], check=True, capture_output=True)


def _static_busybox() -> bool:
    """A busybox that runs without the host's libraries (a dynamic one names its loader)."""
    path = shutil.which("busybox")
    return path is not None and b"ld-linux" not in Path(path).read_bytes()[:4096]


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
