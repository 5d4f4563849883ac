"""The vm runtime's guests as processes (runtimes/vm.py): a container's limits become the guest's
vCPUs and RAM, its spec the qemu command line and the 9p control folder the guest's init reads
(run.sh, mounts, net), its network a tap on a bridge or OVS; then the boot is awaited, the exit
code read back, and the guest and its tap removed. Apart from the adapter (vm.py) and from what
the guests boot (vm_image.py): this is what happens at every container start."""

from __future__ import annotations

import hashlib
import math
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from interference.host import cgroups
from interference.runtimes import ovs
from interference.runtimes.base import ContainerSpec
from interference.runtimes.bridges import Bridges, bridge_name

# guest_cgroup: (description, kernel parameters). The guest's init mounts cgroup2 when it sees
# cgroup_no_v1=all (the v1 hierarchies would otherwise hold the controllers).
GUEST_CGROUPS = {
    "v1": ("v1: cpuset, cpu, memory hierarchies", ""),
    "v2": ("v2: unified (cgroup_no_v1=all), every controller enabled", " cgroup_no_v1=all"),
}
PATH_IN_GUEST = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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


class VmLifecycle:
    """The run methods of the vm runtime, from qemu's argv to the guest's removal. The adapter gives
    its options `o`, the guest `kernel`, `accel()`, `_initramfs()` (VmImages), `state_dir`, `bridges`
    and `attached`; LocalProcessRuntime launches and waits for the qemu process."""

    o: dict
    kernel: str
    state_dir: Path
    bridges: Bridges
    attached: dict[str, ovs.OvsSwitch]

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
            "-kernel", self._boot_kernel(), "-initrd", str(self._initramfs()),
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
