"""Measures how long the workflow takes to plan: a dry run (snakemake -n) of the shipped paper
and default configs, and of the default with more repetitions, to see how planning grows with
the number of jobs.

  python benchmarks/bench_dag.py [--repetitions 1 10 30 73] [--repeat 3]

Each dry run starts in an empty working directory (nothing measured yet: every job is planned)
and is timed from process start to exit, the best of --repeat. Prints one line per case."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def dry_run(configfile: Path, workdir: Path) -> tuple[float, int]:
    """(seconds, jobs) of one dry run."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(SNAKEMAKE), "-n", "--cores", "1", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
         "report/paper.html", "--configfile", str(configfile)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    jobs = int(re.search(r"^total\s+(\d+)", out.stdout, re.M).group(1))
    return seconds, jobs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetitions", type=int, nargs="+", default=[10, 30, 73])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = [("paper", REPO / "config" / "paper.yaml"), ("default", REPO / "config" / "config.yaml")]
        default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
        for reps in a.repetitions:
            cfg = default | {"studies": {**default["studies"]}}
            cfg["studies"]["pairs"] = {**cfg["studies"]["pairs"], "repetitions": reps}
            path = tmp / f"default-rep{reps}.yaml"
            path.write_text(yaml.safe_dump(cfg))
            cases.append((f"default, repetitions {reps}", path))
        for name, path in cases:
            best, jobs = min(dry_run(path, tmp / "work") for _ in range(a.repeat))
            print(f"{name:28s} {jobs:6d} jobs  {best:6.2f} s  {1000 * best / jobs:5.2f} ms/job", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
