"""What the contention telemetry costs the measurement: the same runs with the sampler on
(telemetry_interval_s 0.5, the default) and off (0), interleaved in a seeded random order per
round, on Docker; per case, target and metric the mean with telemetry relative to the mean
without (1 = no effect), with a 95 % bootstrap CI and Welch's p.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_telemetry.py OUTDIR [--rounds 3] [--iterations 10]

OUTDIR gets the images (built by the workflow, from the engine's cache if present), every run's
raw folder and telemetry_overhead.tsv."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from interference.steps.parse import parse_run
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
LIMITS = {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"}
SIZES = {"L": {"n": 1000}, "S": {"array_elements": 4000000, "ntimes": 5}}
MODES = {"on": 0.5, "off": 0}


def build_images(outdir: Path) -> dict[str, Path]:
    config = {
        "host": "bench",
        "runtimes": ["docker"],
        "studies": {"pairs": {"microservices": ["L", "S"], "cases": ["1"]}},
    }
    (outdir / "images.yaml").write_text(yaml.safe_dump(config))
    targets = [f"results/images/bench/docker/{i}.json" for i in ("L", "S")]
    subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(outdir), "--cores", "1", *targets,
         "--configfile", str(outdir / "images.yaml")],
        check=True, capture_output=True,
    )  # fmt: skip
    return {i: outdir / t for i, t in zip(("L", "S"), targets)}


def run(outdir: Path, images: dict, mode: str, case: str, pair: str, rnd: int, iterations: int) -> Path:
    settings = {
        "host": "bench", "runtime": "docker", "runtime_options": {}, "study": "pairs",
        "key": f"case{case}/{pair}", "case": case, "pair": pair, "repetition": rnd,
        "iteration_timeout_s": 120, "limits": LIMITS, "telemetry_interval_s": MODES[mode],
        "sizes": {i: SIZES[i] for i in pair.split("+")},
    }  # fmt: skip
    if case == "1":
        settings["iterations"] = iterations
    else:
        settings["window_s"] = iterations
    meta = outdir / "runs" / mode / f"case{case}" / pair / f"rep{rnd}" / "meta.json"
    used = [str(images[i]) for i in dict.fromkeys(pair.split("+"))]
    subprocess.run(
        [sys.executable, "-m", "interference.steps.runner", "--study", "pairs", "--settings", json.dumps(settings),
         "--images", *used, "--meta", str(meta)],
        check=True, capture_output=True, env={"PYTHONPATH": str(REPO / "scripts"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )  # fmt: skip
    return meta


def overhead(samples: pd.DataFrame) -> pd.DataFrame:
    rows = []
    ok = samples[(samples["status"] == "ok") & samples["in_overlap"]]
    for (case, target, partner, metric), d in ok.groupby(["case", "target", "partner", "metric"]):
        on, off = d[d["mode"] == "on"]["value"].to_numpy(), d[d["mode"] == "off"]["value"].to_numpy()
        if len(on) < 2 or len(off) < 2:
            continue
        ci = stats.bootstrap((on, off), lambda a, b, axis=-1: np.mean(a, axis=axis) / np.mean(b, axis=axis),
                             n_resamples=2000, random_state=1, vectorized=True).confidence_interval  # fmt: skip
        rows.append({
            "case": case, "target": target, "partner": partner, "metric": metric,
            "n_on": len(on), "n_off": len(off), "mean_on": on.mean(), "mean_off": off.mean(),
            "on_over_off": on.mean() / off.mean(), "ci_low": ci.low, "ci_high": ci.high,
            "welch_p": stats.ttest_ind(on, off, equal_var=False).pvalue,
        })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10, help="Case 1 iterations; Case 3a window (s)")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    a.outdir.mkdir(parents=True, exist_ok=True)
    images = build_images(a.outdir)
    order = random.Random(a.seed)
    frames = []
    for rnd in range(1, a.rounds + 1):
        jobs = [(m, c, p) for m in MODES for c, p in (("1", "L"), ("1", "S"), ("3a", "L+S"))]
        order.shuffle(jobs)  # interleaved: neither mode always runs first or on a warmer machine
        for mode, case, pair in jobs:
            meta = run(a.outdir, images, mode, case, pair, rnd, a.iterations)
            frames.append(parse_run(meta).assign(mode=mode, round=rnd))
            print(f"round {rnd} {mode:>3} case {case} {pair}", flush=True)
    samples = pd.concat(frames, ignore_index=True)
    samples.to_csv(a.outdir / "samples.tsv", sep="\t", index=False)
    table = overhead(samples)
    table.to_csv(a.outdir / "telemetry_overhead.tsv", sep="\t", index=False)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
