"""How close the printed time estimate comes to the measured wall time, on a second invocation.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_estimate.py WORKDIR [--config config/ci.yaml]

In WORKDIR (a working folder of its own; the images stay in the engine's cache), the config runs
twice from no results: the first invocation's estimate comes from the studies' models; then its
raw results, parsed files, tables and report are deleted (the durations ledger and the image
records kept) and the second invocation's estimate comes from the first one's durations. With
--first-from DIR, a working folder where the config already ran stands for the first invocation
(its runs go into WORKDIR's ledger) and only the second runs. Prints,
for each, the estimate snakemake printed, the measured wall time and their ratio (the target:
within +-25 % on the second)."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def invocation(workdir: Path, config: Path, cores: int, label: str) -> dict:
    argv = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", str(cores)]
    argv += ["report/paper.html", "--configfile", str(config.resolve())]
    t0 = time.time()
    r = subprocess.run(argv, capture_output=True, text=True)
    wall = time.time() - t0
    out = r.stdout + r.stderr
    (workdir / f"snakemake-{label}.log").write_text(out)
    if r.returncode != 0:
        raise SystemExit(f"{label}: snakemake failed, see {workdir}/snakemake-{label}.log")
    m = re.search(r"^Estimate: about .*? \((\d+) s; runs .*?: (\d+) from this host's earlier runs", out, re.M)
    progress = re.findall(r"^(?:\[[#.]+\] )?(run \d+ of \d+ done, about .* left)", out, re.M)
    return {
        "estimate_s": float(m.group(1)) if m else None,
        "from_history": int(m.group(2)) if m else None,
        "wall_s": wall,
        "progress_lines": progress,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--config", type=Path, default=REPO / "config" / "ci.yaml")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--first-from", type=Path, help="a working folder where the config already ran")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    results = {}
    labels = ("first", "second")
    if a.first_from:
        from interference.stores import durations

        for meta in (a.first_from / "results" / "raw").rglob("meta.json"):
            durations.record(json.loads(meta.read_text()), a.workdir / "results")
        labels = ("second",)
    for label in labels:
        if label == "second":
            for sub in ("raw", "parsed", "stats", "logs"):
                shutil.rmtree(a.workdir / "results" / sub, ignore_errors=True)
            (a.workdir / "report" / "paper.html").unlink(missing_ok=True)
        results[label] = r = invocation(a.workdir, a.config, a.cores, label)
        ratio = r["estimate_s"] / r["wall_s"] if r["estimate_s"] else float("nan")
        print(
            f"{a.config.name} {label} invocation: estimate {r['estimate_s']:.0f} s "
            f"({r['from_history']} runs from history), measured {r['wall_s']:.0f} s, estimate/measured {ratio:.2f}"
        )
        if r["progress_lines"]:
            print(f"  progress: first '{r['progress_lines'][0]}', last '{r['progress_lines'][-1]}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
