"""A KVM virtual machine (`vm`) per container: Debian's qemu-system-x86, a Debian kernel booted
directly (/boot/vmlinuz-*, package linux-image-amd64; uncompressed at its PVH entry where it has
one, runtimes/vm_kernel.py) with an initramfs of our own (Debian's
static busybox and that kernel's virtio, ext4 and 9p modules: containers/vm/initramfs-init), and
a virtio disk made from the Docker image's root file system (runtimes/rootfs.py) with the
guest's init added (containers/vm/init, plumbing with the same busybox). The disk is shared by every guest of an image, opened with snapshot=on: each
guest's writes are thrown away when it stops, as a container's upper layer is.

Limits are the machine's: vCPUs = the cores of the cpuset (or the CPU quota rounded up), and
the guest's RAM = the memory limit; the qemu process itself runs in a host cgroup with that
cpuset and quota (host/cgroups.py), so a vCPU runs only where a container would. The
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
disk images, private networks are bridges (runtimes/bridges.py) with a tap per guest.

The guests' image (disk, initramfs) is built in runtimes/vm_image.py, their qemu processes are
started and removed in runtimes/vm_lifecycle.py; this module is the adapter that joins them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from interference.host import cgroups
from interference.host.packages import IPROUTE, IPTABLES, HostPackage, static_busybox
from interference.runtimes import ovs, rootfs
from interference.runtimes.base import LIMIT_KINDS, Capabilities, RuntimeUnavailable
from interference.runtimes.bridges import BridgedNetworks, Bridges
from interference.runtimes.local_processes import LocalProcessRuntime
from interference.runtimes.vm_image import VmImages, guest_modules, newest
from interference.runtimes.vm_lifecycle import GUEST_CGROUPS, VmLifecycle

HOW_TO_GET = (
    "On Debian: apt-get install qemu-system-x86 linux-image-amd64 busybox-static e2fsprogs cpio, "
    "and a readable and writable /dev/kvm (a machine with virtualisation, or nested KVM)."
)


class VmRuntime(VmLifecycle, VmImages, BridgedNetworks, rootfs.ExportedTreeImages, LocalProcessRuntime):
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
                "guest kernel": f"{self.kernel_version}, with the runtime's own initramfs"
                + (", booted uncompressed at its PVH entry" if self._boot_kernel() != self.kernel else ""),
                "guests": "one VM per container, booted for it (Case 1: one boot per iteration)",
                "limits": "vCPUs and RAM of the guest; qemu in a host cgroup with the cpuset and quota",
                "guest cgroups": GUEST_CGROUPS[self.o["guest_cgroup"]][0],
            },
        }


def _static_busybox() -> bool:
    """A busybox that runs without the host's libraries (a dynamic one names its loader)."""
    path = shutil.which("busybox")
    return path is not None and b"ld-linux" not in Path(path).read_bytes()[:4096]
