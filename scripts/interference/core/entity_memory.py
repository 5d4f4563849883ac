"""Whether N concurrent entities fit in this machine's memory: refused before anything runs,
naming N and the runtime. Per entity: a VM's RAM (the vm runtime's default_memory, 2 GiB, as no
limit is set), a nested parent's engine and loaded image, or a process's working set."""

from __future__ import annotations

import os

GIB = 1024**3
PER_ENTITY = {"vm": 2 * GIB, "nested": GIB // 2}
OTHERWISE = 64 * 1024**2
USABLE_SHARE = 0.8


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(runtimes: list[str], n: int, total: int | None = None) -> None:
    total = total or machine_memory()
    for rt in runtimes:
        need = n * PER_ENTITY.get(rt, OTHERWISE)
        if need > USABLE_SHARE * total:
            raise ValueError(
                f"N={n} on {rt} needs about {need / GIB:.1f} GiB ({PER_ENTITY.get(rt, OTHERWISE) / GIB:.2f} GiB "
                f"an entity), more than {USABLE_SHARE:.0%} of this machine's {total / GIB:.1f} GiB"
            )
