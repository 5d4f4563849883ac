"""The startup study's run: N containers of the base image started, waited for, timed."""

from __future__ import annotations

import time

from interference.runtimes import ContainerSpec


def execute(run):
    names = [run.name(f"c{i}") for i in range(run.settings["instances"])]
    t0 = time.time()
    for name in names:
        run.start(
            ContainerSpec(name=name, image=run.images["base"]["id"], command=["true"], labels=run.labels), "c"
        )
    codes = run.wait_all(names, t0 + 120)
    seconds = time.time() - t0
    failed = sum(code != 0 for code in codes.values())
    return {"seconds": seconds, "exit_codes": codes, "n_iterations": 1, "n_failed": int(failed > 0)}
