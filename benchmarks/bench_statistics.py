"""Time the whole statistics step (read, four outputs, write) over synthetic samples.

Shape like a real study: 2 targets (L: 1 metric, S: 4 metrics) x 6 partners x cases
1, 2, 3a, 3b, ~2% failed and ~3% out-of-overlap samples.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_statistics.py [--samples 100000]"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from interference.studies.pairs import statistics

TARGETS = {
    "L": [("gflops", "GFLOPS", True, 20.0)],
    "S": [
        (m, "MB/s", True, base)
        for m, base in [("copy", 9000.0), ("scale", 8800.0), ("add", 9900.0), ("triad", 9950.0)]
    ],
}
PARTNERS = ["L", "S", "B", "NS", "NR", "Y"]
CASE_EFFECT = {"1": 1.0, "2": 1.2, "3a": 0.95, "3b": 0.9}


def synthetic(n_samples: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    groups = [
        (case, target, partner)
        for target in TARGETS
        for case in CASE_EFFECT
        for partner in ([""] if case == "1" else PARTNERS)
    ]
    rows_per_iteration = {t: len(m) for t, m in TARGETS.items()}
    weight = np.array([rows_per_iteration[t] for _, t, _ in groups], dtype=float)
    iterations = np.floor(n_samples * weight / weight.sum() / weight).astype(int)
    frames = []
    for (case, target, partner), k in zip(groups, iterations):
        for metric, unit, higher, base in TARGETS[target]:
            mean = base * CASE_EFFECT[case] * (1 - 0.02 * PARTNERS.index(partner) if partner else 1)
            frames.append(
                pd.DataFrame(
                    {
                        "host": "bench",
                        "runtime": "docker",
                        "case": case,
                        "target": target,
                        "partner": partner,
                        "repetition": 1,
                        "member": 1 + np.arange(k) % 2,
                        "iteration": np.arange(k),
                        "metric": metric,
                        "value": rng.normal(mean, 0.05 * mean, k),
                        "unit": unit,
                        "higher_is_better": higher,
                        "start": np.arange(k, dtype=float),
                        "end": np.arange(k, dtype=float) + 1,
                        "in_overlap": rng.random(k) > 0.03,
                        "status": np.where(rng.random(k) < 0.02, "timeout", "ok"),
                    }
                )
            )
    df = pd.concat(frames, ignore_index=True)
    # Top up to exactly n_samples with more baseline iterations of the first group.
    extra = df.iloc[: n_samples - len(df)] if len(df) < n_samples else df.iloc[:0]
    df = pd.concat([df, extra], ignore_index=True).iloc[:n_samples]
    df.loc[df["status"] != "ok", "value"] = np.nan
    df.loc[df["case"] == "1", "in_overlap"] = True
    return df


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    df = synthetic(args.samples)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        statistics.write(
            df.assign(value=df["value"].map(lambda v: f"{v:.6f}" if v == v else "")), tmp / "samples.tsv"
        )
        t0 = time.perf_counter()
        statistics.main(
            ["--samples", str(tmp / "samples.tsv"), "--jobs", str(args.jobs)]
            + [
                a
                for name in ["summary", "interference", "anova", "posthoc"]
                for a in (f"--{name}", str(tmp / f"{name}.tsv"))
            ]
        )
        seconds = time.perf_counter() - t0
    print(
        f"{len(df)} samples, {df.groupby(statistics.GROUP).ngroups} groups: "
        f"{seconds:.2f} s for the whole statistics step (read + compute + write, "
        f"{args.jobs} jobs)"
    )


if __name__ == "__main__":
    main()
