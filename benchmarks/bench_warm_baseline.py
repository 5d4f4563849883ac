"""Where Case 1's run-to-run spread comes from: the fresh container of each iteration, or the core
it is pinned to, or the host's moment. Case 1 as the papers run it (a fresh container for every
iteration, `docker run --rm`, pinned to the first core) against the same iterations in one warm
container, and against fresh containers on the second core, interleaved.

  python benchmarks/bench_warm_baseline.py [--config config/config.yaml] [--microservices L S Y]
      [--rounds 8] [--iterations 3] [--seed 1]

Each round runs, for every microservice in a fresh random order, one run of each protocol in a
random order of their own (Abedi and Brecht's randomized multiple interleaved trials):
- `fresh@0`: `iterations` containers of one iteration each on core 0 (the pair study's Case 1);
- `warm@0`: one container running `iterations` iterations on core 0 (what a phase of the paired
  design, config `phases`, measures as its alone side in Case 3b);
- `fresh@1`: as fresh@0 on core 1 (Case 3b's second member's core);
each with the config's memory limit and sizes. It prints, per microservice and metric:
- each protocol's variance components (`stats/variance_components.nested`: between runs and
  between iterations of a run, relative to the protocol's mean), so that a per-run effect shows
  as the SD between runs;
- warm@0 and fresh@1 against fresh@0 of the same round: the mean log ratio and its 95 % t
  interval over rounds (the level it covers: rounds), as a relative difference (> 0: better
  than fresh@0), with the SD of the round log ratios: what is left of the per-run effect when
  the two runs of a round are compared.
Needs the pipeline's images (any `make paper`, or `snakemake --cores 1
results/images/$(hostname -s)/docker/L.json`) and Docker on a host with two cores or more; it
takes the measurement lock, so no pipeline's run meets it. About 4 s a run at the default's
sizes (L, S, Y): 8 rounds in about 5 minutes."""

from __future__ import annotations

import argparse
import json
import math
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import numpy as np  # noqa: E402
from interference import parsers  # noqa: E402
from interference.core.loop import RESULTS_IN_CONTAINER, loop_command, read_iterations  # noqa: E402
from interference.core.microservices import registry  # noqa: E402
from interference.host.locks import measurement_lock  # noqa: E402
from interference.stats.variance_components import nested  # noqa: E402
from interference.steps.config import read_yaml, validate  # noqa: E402
from scipy import stats  # noqa: E402

# (name, one container for the run's iterations, core)
PROTOCOLS = [("fresh@0", False, "0"), ("warm@0", True, "0"), ("fresh@1", False, "1")]
REFERENCE = "fresh@0"
TIMEOUT_S = 300


def image_of(ms_id: str) -> str:
    """The image the pair study runs the microservice in (its record, as the workflow wrote it)."""
    path = REPO / "results" / "images" / socket.gethostname().split(".")[0] / "docker" / f"{ms_id}.json"
    if not path.exists():
        sys.exit(f"no image record {path}: build the images first (see --help)")
    return json.loads(path.read_text())["id"]


def docker_run(image: str, env: dict, outdir: Path, ms_id: str, first: int, count: int, limits: dict) -> None:
    cmd = ["docker", "run", "--rm", "--cpuset-cpus", limits["cpuset"], "--memory", limits["memory"],
           "-v", f"{outdir}:{RESULTS_IN_CONTAINER}"]  # fmt: skip
    for k, v in env.items():
        cmd += ["-e", f"{k}={v}"]
    cmd += [image, *loop_command(ms_id, ms_id, first, time.time(), "count", count, TIMEOUT_S)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=TIMEOUT_S * count + 60)


def one_run(ms, image: str, sizes: dict, warm: bool, iterations: int, limits: dict) -> dict[str, list]:
    """{metric: [value per iteration]} of one run: one container for all its iterations (warm) or
    one container per iteration."""
    with tempfile.TemporaryDirectory(prefix="warm-baseline-") as tmp:
        outdir = Path(tmp)
        env = ms.container_env(sizes)
        if warm:
            docker_run(image, env, outdir, ms.id, 1, iterations, limits)
        else:
            for it in range(1, iterations + 1):
                docker_run(image, env, outdir, ms.id, it, 1, limits)
        parse = parsers.get(ms.parser)
        values: dict[str, list] = {m.name: [] for m in ms.metrics}
        for it in read_iterations(outdir / ms.id, TIMEOUT_S):
            err = outdir / it["stderr"]
            try:
                parsed = parse((outdir / it["stdout"]).read_text(errors="replace"),
                               err.read_text(errors="replace") if err.exists() else "")  # fmt: skip
            except parsers.ParseError:
                continue  # a failed iteration: a value of no protocol
            for name, v in parsed.items():
                if isinstance(v, (int, float)) and name in values:
                    values[name].append(float(v))
        return values


def t_interval(x: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    m = float(x.mean())
    h = stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return m, m - h, m + h


def report(ms, runs: list[dict]) -> list[str]:
    """Lines for one microservice: each protocol's components and its ratio to the reference."""
    lines = []
    for metric in ms.metrics:
        name = metric.name
        for protocol, *_ in PROTOCOLS:
            mine = [r for r in runs if r["protocol"] == protocol and r["values"][name]]
            values = [v for r in mine for v in r["values"][name]]
            if len(mine) < 2:
                lines.append(f"  {ms.id} {name} {protocol}: fewer than 2 runs")
                continue
            c = nested(values, ["cell"] * len(values), [r["round"] for r in mine for _ in r["values"][name]])
            lines.append(
                f"  {ms.id} {name} {protocol}: mean {np.mean(values):.4g} {metric.unit}, "
                f"SD between runs {math.sqrt(max(c.run, 0)):.1%} (df {c.df_run}), "
                f"within a run {math.sqrt(c.iteration):.1%} (df {c.df_iteration}), {len(mine)} runs"
            )
        for protocol, *_ in PROTOCOLS[1:]:
            ratios = []
            for rnd in sorted({r["round"] for r in runs}):
                side = {r["protocol"]: np.mean(r["values"][name]) for r in runs
                        if r["round"] == rnd and r["values"][name]}  # fmt: skip
                if REFERENCE in side and protocol in side and min(side[REFERENCE], side[protocol]) > 0:
                    ratios.append(
                        math.log(side[protocol] / side[REFERENCE]) * (1 if metric.higher_is_better else -1)
                    )
            if len(ratios) < 2:
                lines.append(f"  {ms.id} {name} {protocol} against {REFERENCE}: fewer than 2 complete rounds")
                continue
            m, lo, hi = t_interval(np.array(ratios))
            lines.append(
                f"  {ms.id} {name} {protocol} against {REFERENCE} (same round): {math.expm1(m):+.1%} "
                f"[{math.expm1(lo):+.1%}, {math.expm1(hi):+.1%}] over {len(ratios)} rounds (> 0: better); "
                f"SD of the round log ratios {np.std(ratios, ddof=1):.3f}"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    ap.add_argument("--microservices", nargs="+", default=["L", "S", "Y"])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.rounds < 2 or a.iterations < 2:
        sys.exit(
            "--rounds and --iterations must be at least 2 (an interval over rounds, a spread within a run)"
        )
    pairs = validate(read_yaml(a.config), str(a.config), machine=False)["studies"]["pairs"]
    sizes, memory = pairs["sizes"], pairs["limits"]["memory"]
    ms = registry()
    unknown = [m for m in a.microservices if m not in ms]
    if unknown:
        sys.exit(f"unknown microservices: {', '.join(unknown)}")
    images = {m: image_of(m) for m in a.microservices}
    rng = random.Random(a.seed)
    runs: list[dict] = []
    t0 = time.time()
    with measurement_lock():
        for rnd in range(1, a.rounds + 1):
            for m in rng.sample(a.microservices, len(a.microservices)):
                for protocol, warm, core in rng.sample(PROTOCOLS, len(PROTOCOLS)):
                    limits = {"cpuset": core, "memory": memory}
                    values = one_run(ms[m], images[m], sizes.get(m, {}), warm, a.iterations, limits)
                    runs.append({"ms": m, "round": rnd, "protocol": protocol, "values": values})
            print(f"round {rnd} of {a.rounds} done ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    print(f"Case 1's protocols: {a.rounds} rounds, {a.iterations} iterations a run, memory {memory}, "
          f"sizes of {a.config.name}, {time.time() - t0:.0f} s")  # fmt: skip
    for m in a.microservices:
        print("\n".join(report(ms[m], [r for r in runs if r["ms"] == m])))


if __name__ == "__main__":
    main()
