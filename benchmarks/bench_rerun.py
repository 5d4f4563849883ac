"""Measures whether the intervals respect a rerun: the same config run twice, from scratch, in two
folders on this machine, and the second run's results held against the first's intervals.

  python benchmarks/bench_rerun.py [--config config/config.yaml] [--cores 2]
  python benchmarks/bench_rerun.py --compare FIRST_FOLDER SECOND_FOLDER   (two finished runs)

Prints, over the IR cells both runs have: the share whose second IR lies outside the first run's
95 % CI (calibrated intervals that cover run-to-run variation give about 17 %: the chance that a
fresh draw lies outside another draw's 95 % interval), the share with disjoint intervals, the
sign flips with both |IR| > 5 %, split by the interval's level (runs and iterations, or
iterations only); then the findings whose verdict changed, and any that flipped between
reproduced and not reproduced. The default config takes about 45 minutes a run on 2 cores."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
CELL = ["host", "runtime", "case", "target", "partner", "metric"]


def run(config: Path, work: Path, cores: int) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [str(SNAKEMAKE), "--cores", str(cores), "-s", str(REPO / "Snakefile"), "-d", str(work),
         "report/paper.html", "--configfile", str(config.resolve())],
        check=True,
    )  # fmt: skip
    return time.perf_counter() - t0


def compare(first: Path, second: Path) -> None:
    def ir(folder):
        t = pd.read_csv(
            folder / "results/stats/pairs/interference.tsv",
            sep="\t",
            dtype={"case": str},
            keep_default_na=False,
        )
        for c in ("ir", "ir_ci_low", "ir_ci_high"):
            t[c] = pd.to_numeric(t[c], errors="coerce")
        return t.dropna(subset=["ir", "ir_ci_low", "ir_ci_high"])

    a, b = ir(first), ir(second)
    j = a.merge(b, on=CELL, suffixes=("_1", "_2"))
    outside = (j["ir_2"] < j["ir_ci_low_1"]) | (j["ir_2"] > j["ir_ci_high_1"])
    disjoint = (j["ir_ci_low_2"] > j["ir_ci_high_1"]) | (j["ir_ci_high_2"] < j["ir_ci_low_1"])
    flips = (j["ir_1"] * j["ir_2"] < 0) & (j["ir_1"].abs() > 0.05) & (j["ir_2"].abs() > 0.05)
    print(f"IR cells in both runs: {len(j)}")
    print(
        f"  second IR outside the first's 95 % CI: {int(outside.sum())} ({outside.mean():.0%}); about 17 % if calibrated"
    )
    print(f"  disjoint intervals: {int(disjoint.sum())} ({disjoint.mean():.0%})")
    print(f"  sign flips with both |IR| > 5 %: {int(flips.sum())}")
    if "ci_level_1" in j:
        for level, g in j.groupby("ci_level_1"):
            print(f"  levels '{level}': {len(g)} cells, outside {outside[g.index].mean():.0%}")
    fa = pd.read_csv(first / "results/stats/findings.tsv", sep="\t", dtype=str).set_index("id")["verdict"]
    fb = pd.read_csv(second / "results/stats/findings.tsv", sep="\t", dtype=str).set_index("id")["verdict"]
    both = fa.index.intersection(fb.index)
    scored = [i for i in both if fa[i] not in ("not run in this config", "not testable on this machine")]
    same = [i for i in scored if fa[i] == fb[i]]
    hard = {"reproduced", "not reproduced"}
    flipped = [i for i in scored if {fa[i], fb[i]} == hard]
    print(
        f"findings scored: {len(scored)}; same verdict: {len(same)} ({len(same) / max(1, len(scored)):.0%})"
    )
    for i in scored:
        if fa[i] != fb[i]:
            print(f"  {i}: {fa[i]} -> {fb[i]}")
    print(f"flipped between reproduced and not reproduced: {len(flipped)} {flipped}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=REPO / "config/config.yaml")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("FIRST", "SECOND"))
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        folders = [Path(tmp) / "first", Path(tmp) / "second"]
        for f in folders:
            print(f"{f.name} run: {run(a.config, f, a.cores) / 60:.1f} min", flush=True)
        compare(*folders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
