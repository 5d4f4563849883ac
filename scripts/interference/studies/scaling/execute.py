"""The scaling study: one run on its runtime (Study.execute)."""

from __future__ import annotations

from interference.core.loop import (
    RELEASED_BY_FILE,
    loop_command,
    read_iterations,
    read_limits,
    write_start_file,
)
from interference.core.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.scaling import MICROSERVICE

WAIT_MARGIN_S = 60.0


def execute(run) -> dict:
    s = run.settings
    ms = registry()[MICROSERVICE]
    env = ms.container_env({"max_prime": s["max_prime"], "events": s["events"]})
    names = []
    for k in range(1, s["instances"] + 1):
        command = loop_command(
            MICROSERVICE,
            f"instance{k}",
            1,
            RELEASED_BY_FILE,
            "count",
            s["iterations"],
            s["iteration_timeout_s"],
        )
        spec = ContainerSpec(
            name=run.name(f"i{k}"),
            image=run.images[MICROSERVICE]["id"],
            command=command,
            env=env,
            binds=[(str(run.outdir), "/results")],
            labels=run.labels,
        )
        run.start(spec, f"instance{k}")
        names.append(spec.name)
    start_at, _ = write_start_file(run.outdir)
    deadline = start_at + s["iterations"] * s["iteration_timeout_s"] + WAIT_MARGIN_S
    run.wait_all(names, deadline)
    instances = []
    for k in range(1, s["instances"] + 1):
        d = run.outdir / f"instance{k}"
        its = read_iterations(d, s["iteration_timeout_s"])
        instances.append(
            {
                "instance": k,
                "dir": d.name,
                "limits_read_back": read_limits(d / "limits.txt"),
                "iterations": its,
            }
        )
    n_its = sum(len(i["iterations"]) for i in instances)
    failed = sum(it["status"] != "ok" for i in instances for it in i["iterations"])
    failed += s["instances"] * s["iterations"] - n_its  # iterations that never ran
    return {"start_at": start_at, "instances": instances, "n_iterations": n_its, "n_failed": failed}
