"""The same study run locally and through Slurm (profiles/slurm) on a single-node Slurm started
on this machine: wall time, jobs, Slurm jobs, and whether both left the same runs.

  PYTHONPATH=scripts:tests .venv/bin/python benchmarks/bench_slurm.py OUTDIR [--config config/ci.yaml]

Each mode gets a fresh working folder under OUTDIR (the images stay in the engines' caches, so
both measure runs, parsing, statistics and the report, not image builds)."""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from support.slurm_local import LocalCluster

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def run(workdir: Path, config: Path, extra: list[str], env: dict | None = None) -> dict:
    workdir.mkdir(parents=True)
    host = socket.gethostname().split(".")[0]
    argv = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), *extra, "report/paper.html"]
    argv += ["--configfile", str(config.resolve()), "--config", f"host={host}"]
    t0 = time.time()
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    (workdir / "snakemake.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        raise SystemExit(f"{workdir}: snakemake failed, see {workdir}/snakemake.log")
    jobs = len(re.findall(r"^Finished jobid", r.stdout + r.stderr, re.M))
    slurm = len(list((workdir / ".snakemake" / "slurm_logs").rglob("*.log")))
    runs = sorted(str(p.relative_to(workdir)) for p in workdir.glob("results/raw/**/meta.json"))
    return {"wall_s": wall, "jobs": jobs, "slurm_jobs": slurm, "runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--config", type=Path, default=REPO / "config" / "ci.yaml")
    a = ap.parse_args()
    local = run(a.outdir / "local", a.config, ["--cores", "2"])
    with LocalCluster(a.outdir / "slurm-state") as env:
        slurm = run(a.outdir / "slurm", a.config, ["--profile", str(REPO / "profiles" / "slurm")], env)
    print(f"config {a.config}: {len(local['runs'])} runs")
    for name, r in (("local", local), ("slurm", slurm)):
        print(f"{name:6s} wall {r['wall_s'] / 60:5.1f} min ({r['wall_s']:.0f} s), {r['jobs']} jobs finished, "
              f"{r['slurm_jobs']} Slurm jobs")  # fmt: skip
    print(f"through Slurm / local: {slurm['wall_s'] / local['wall_s']:.2f}")
    print("same runs:", local["runs"] == slurm["runs"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
