"""The two-host study (config/paper004-two-hosts.yaml: hosts fog and edge) made both ways, wall
time each, from empty working folders:

  separate   fog's runs locally (--config host=fog run_on=[fog]), then scripts/edge_host.sh
             (the edge as a container with its own engine, the pipeline inside it, exported),
             the import, and the report;
  one        one invocation through Slurm (profiles/slurm) on the two-node cluster of
             support.slurm_local (node fog: this machine; node edge: a container with its own
             engine and slurmd), the edge on the same core and memory as edge_host.sh gives it.

  PYTHONPATH=scripts:tests .venv/bin/python benchmarks/bench_two_hosts.py OUTDIR [--parallel]
  PYTHONPATH=scripts:tests .venv/bin/python benchmarks/bench_two_hosts.py OUTDIR --only-one \
      --config config/paper001-two-hosts.yaml [--without-runtime vm]

The images stay in this machine's engine's cache and are copied into the edge's in both modes, so
both measure runs, parsing, statistics and the report (and, separately, the edge's venv).
--parallel also runs the one invocation with --resources measurement=2: both nodes measure at once
(on this machine they share the CPU, so that mode is for the time, not for numbers)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import yaml
from support.edge_node import EdgeNode
from support.slurm_local import LocalCluster, images_for

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
CONFIG = REPO / "config" / "paper004-two-hosts.yaml"


def sh(argv: list[str], log: Path, env: dict | None = None, cwd: Path | None = None) -> float:
    t0 = time.time()
    with open(log, "a") as f:
        subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, check=True, env=env, cwd=cwd)
    return time.time() - t0


def snakemake(workdir: Path, *args: str, config: Path = CONFIG) -> list[str]:
    return [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args, "--configfile", str(config)]


def without_runtime(config: Path, runtime: str, out: Path) -> Path:
    """The config with one runtime left out everywhere (e.g. the VM, which runs emulated here)."""
    cfg = yaml.safe_load(config.read_text())
    for part in [cfg, *cfg.get("studies", {}).values()]:
        if runtime in part.get("runtimes", []):
            part["runtimes"].remove(runtime)
    out.write_text(yaml.safe_dump(cfg))
    return out


def separate(out: Path) -> dict:
    work = out / "separate"
    work.mkdir(parents=True)
    log = work / "bench.log"
    fog = sh(
        snakemake(work, "--cores", "1", "report/paper.html", "--config", "host=fog", "run_on=[fog]"), log
    )
    # edge_host.sh copies the images the working folder's records name (run from it).
    edge = sh(
        [str(REPO / "scripts" / "edge_host.sh"), str(CONFIG), "edge", str(work / "edge")], log, cwd=work
    )
    env = {
        "PYTHONPATH": str(REPO / "scripts"),
        "PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
    }
    imported = sh(
        [sys.executable, "-m", "interference.steps.transfer", "import", str(work / "edge" / "results-edge.tar.gz"),
         "--config", str(CONFIG)],
        log, env, cwd=work,
    )  # fmt: skip
    report = sh(
        snakemake(work, "--cores", "1", "report/paper.html", "--config", "host=fog", "run_on=[fog]"), log
    )
    return {"fog": fog, "edge_host.sh": edge, "import": imported, "report": report}


def one_invocation(out: Path, name: str, extra: list[str], config: Path = CONFIG) -> dict:
    work = out / name
    work.mkdir(parents=True)
    refs = (
        images_for(config, out / f"{name}-images")
        if "edge" in yaml.safe_load(config.read_text())["run_on"]
        else []
    )
    # edge_host.sh's core and memory; both nodes measuring at once (--parallel) needs the edge's
    # own measurement lock.
    both = "measurement=2" in extra
    edge = EdgeNode(cpuset="0", shared=[work], preload=refs, share_lock=not both)
    t0 = time.time()
    with LocalCluster(out / f"{name}-slurm", node="fog", edge=edge) as env:
        up = time.time() - t0
        wall = sh(
            snakemake(
                work,
                "--profile",
                str(REPO / "profiles" / "slurm"),
                "report/paper.html",
                *extra,
                config=config,
            ),
            work / "bench.log",
            env,
        )
    jobs = len(list((work / ".snakemake" / "slurm_logs").rglob("*.log")))
    return {"cluster up": up, "snakemake": wall, "slurm jobs": jobs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("--only-one", action="store_true", help="the one invocation only")
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("--without-runtime")
    a = ap.parse_args()
    a.outdir = a.outdir.resolve()
    a.outdir.mkdir(parents=True, exist_ok=True)
    config = a.config.resolve()
    if a.without_runtime:
        config = without_runtime(config, a.without_runtime, a.outdir / "config.yaml")
    results = {} if a.only_one else {"separate": separate(a.outdir)}
    print("separate:", results.get("separate"), flush=True)  # kept should a later mode fail
    results["one invocation"] = one_invocation(a.outdir, "one", [], config)
    if a.parallel:
        results["one invocation, both nodes at once"] = one_invocation(
            a.outdir, "parallel", ["--resources", "measurement=2"]
        )
    for mode, parts in results.items():
        total = sum(v for k, v in parts.items() if k != "slurm jobs")
        shown = ", ".join(
            f"{k} {v / 60:.1f} min" if k != "slurm jobs" else f"{v} Slurm jobs" for k, v in parts.items()
        )
        print(f"{mode}: {total / 60:.1f} min ({shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
