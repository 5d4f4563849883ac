"""What booting the guest kernel at its PVH entry saves per VM (runtimes/vm_kernel.py).

Each round boots one guest of the `vm` runtime through its own start/wait/remove (the runtime's
initramfs, an image's disk, the 9p control share, one vCPU pinned to core 0, 1 GiB) running
`true`, once with the distribution's bzImage and once with the kept uncompressed kernel, in a
seeded random order; the time is from start() to the guest's power-off (wait returns). Prints
each kernel's mean boot with a t interval over its boots, and the difference's paired t
interval. Needs root, qemu and a vm disk of the image (a run of the vm runtime made it); holds
the measurement lock.

  .venv/bin/python benchmarks/bench_vm_boot.py [--rounds 8] [--image interference/s] [--seed 1]"""

from __future__ import annotations

import argparse
import glob
import random
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.host.locks import measurement_lock
from interference.runtimes import ContainerSpec
from interference.runtimes.vm import VmRuntime

KERNELS = ("bzImage", "pvh")


def boot(vm: VmRuntime, disk: str, kernel: str, name: str) -> float:
    """Seconds from start() to power-off with `kernel`: the file -kernel gets."""
    vm._kernel_booted = kernel  # made before the clock starts, as a run's adapter has it
    spec = ContainerSpec(name=name, image=f"vmdisk:{disk}", command=["true"], cpuset="0", memory="1g")
    t0 = time.monotonic()
    try:
        vm.start(spec)
        code = vm.wait(name, 300)
        took = time.monotonic() - t0
    finally:
        vm.remove(name)
    if code != 0:
        raise RuntimeError(f"the guest ({Path(kernel).name}) exited {code}: {vm.logs(name)[-1000:]}")
    return took


def interval(x: np.ndarray) -> tuple[float, float]:
    return stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--image", default="interference/s", help="a Docker image whose vm disk exists")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.rounds < 4:
        ap.error("--rounds must be at least 4: an interval over two or three boots says little")
    vm = VmRuntime()
    stem = a.image.split("/")[-1].replace("-", "_")
    disks = sorted(glob.glob(str(vm.disk_dir / f"interference_{stem}_*.img")))
    if not disks:
        sys.exit(f"no vm disk of {a.image} under {vm.disk_dir}: run a study with runtime vm first")
    if vm.accel()[0] != "tcg":
        print(f"acceleration: {vm.accel()}")
    rng = random.Random(a.seed)
    order = [k for _ in range(a.rounds) for k in rng.sample(KERNELS, len(KERNELS))]  # both in each round
    files = {"bzImage": vm.kernel, "pvh": vm._boot_kernel()}
    if files["pvh"] == vm.kernel:
        sys.exit(f"{vm.kernel} has no PVH entry (or no payload Python decompresses): nothing to compare")
    took: dict[str, list[float]] = {k: [] for k in KERNELS}
    with measurement_lock():
        for i, kernel in enumerate(order):
            took[kernel].append(boot(vm, disks[-1], files[kernel], f"interference-bench-boot-{i}"))
            print(f"{i + 1:3d}/{len(order)} {kernel:8s} {took[kernel][-1]:6.2f} s", flush=True)
    print(f"\nguest kernel {vm.kernel}, disk {Path(disks[-1]).name}, {vm.accel()[0]}, {a.rounds} rounds")
    for k in KERNELS:
        x = np.array(took[k])
        lo, hi = interval(x)
        print(
            f"{k:8s} mean {x.mean():6.2f} s  SD {x.std(ddof=1):5.2f}  95 % CI over boots [{lo:.2f}, {hi:.2f}]"
        )
    # Paired by round: the two boots of a round are next to each other, in a random order.
    d = np.array(took["bzImage"]) - np.array(took["pvh"])
    lo, hi = interval(d)
    print(f"saved per boot: {d.mean():.2f} s, 95 % CI over rounds [{lo:.2f}, {hi:.2f}]")


if __name__ == "__main__":
    main()
