"""Startup cost per entity on each runtime: from "start it" to "it has exited and is removed",
for a command that does nothing (`true`), with Case 1's limits (cpuset 0, 1 GiB), through the
same runtime adapters the runs use. For `nested`, the run's parent (create, inner engine ready,
child image load) is timed apart from the child.

  PYTHONPATH=scripts python benchmarks/bench_startup.py --results results --runtimes docker lxc vm \
      [--image L] [--repeat 5]

It needs the image json of each runtime (results/images/<host>/<runtime>/<image>.json: snakemake makes
them). It takes the measurement lock, so it never runs beside a measurement."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from interference import runtimes
from interference.host.locks import measurement_lock
from interference.runtimes import ContainerSpec


def one_entity(rt, image_id: str, outdir: Path, labels: dict) -> float:
    spec = ContainerSpec(
        name=f"interference-bench-{uuid.uuid4().hex[:8]}",
        image=image_id,
        command=["true"],
        cpuset="0",
        memory="1g",
        binds=[(str(outdir), "/results")],
        labels=labels,
    )
    t0 = time.perf_counter()
    rt.start(spec)
    code = rt.wait(spec.name, 600)
    rt.remove(spec.name)
    if code != 0:
        raise RuntimeError(f"{rt.name}: `true` exited {code}: {rt.logs(spec.name)[-500:]}")
    return time.perf_counter() - t0


def bench(runtime: str, image_json: Path, repeat: int) -> dict:
    rt = runtimes.get(runtime)
    rt.check()
    image = json.loads(image_json.read_text())
    run = uuid.uuid4().hex[:12]
    labels = {"interference.run": f"bench-{run}"}
    out: dict = {"runtime": runtime, "entity": []}
    with tempfile.TemporaryDirectory(prefix="interference-bench-") as tmp:
        try:
            t0 = time.perf_counter()
            parent = rt.open_run(
                Path(tmp), labels, {image["image"]: {"ref": image["ref"], "id": image["id"]}}
            )
            if parent:
                out["run_setup_s"] = round(time.perf_counter() - t0, 3)
                out["run_setup"] = {k: v for k, v in parent.items() if k.endswith("_s")}
            out["entity"] = [one_entity(rt, image["id"], Path(tmp), labels) for _ in range(repeat)]
        finally:
            rt.remove_labelled("interference.run", labels["interference.run"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--runtimes", nargs="+", default=["docker"])
    ap.add_argument("--image", default="L")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with measurement_lock():
        for runtime in a.runtimes:
            r = bench(runtime, next((a.results / "images").glob(f"*/{runtime}/{a.image}.json")), a.repeat)
            xs = r["entity"]
            sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
            line = f"{runtime}: start→exit→removed mean {statistics.mean(xs):.3f} s, sd {sd:.3f}, n {len(xs)}"
            if "run_setup_s" in r:
                line += f"; per run first: {r['run_setup_s']:.3f} s {r['run_setup']}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
