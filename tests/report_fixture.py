"""A small synthetic stats set for the report, made the way the pipeline makes a real one.

Synthetic meta.json files (three microservices: L for CPU, S for memory and a stand-in B for
disk, all four cases, all pairs, on two runtimes: docker and bare metal `baremetal`) ->
interference.steps.run_tables, environment and order_agreement (pairs/runs.tsv, pairs/run_members.tsv, environment.json,
run_order.tsv); samples drawn
from those runs' iterations (with telemetry) -> the pair study's statistics (pairs/{summary,
interference,anova,posthoc,runtimes,contention,pressure_correlation,contention_by_case,split}.tsv),
its published comparison (pairs/published.tsv) and the findings scorecard (findings.tsv). Some iterations fall outside the overlap,
two fail, some groups vary by more than 10 %, so every part of the report has something to show.

  python tests/report_fixture.py OUT_DIR [RUNTIME ...]   writes OUT_DIR/environment.json,
                                                          OUT_DIR/run_order.tsv, OUT_DIR/pairs/*.tsv"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from interference.steps import environment as run_info
from interference.steps import order_agreement, run_tables, scorecard
from interference.steps.statistics import write
from interference.studies.pairs import statistics
from interference.studies.pairs.statistics import (
    drift,
    fidelity,
    hypothesis_tests,
    iteration_telemetry,
    limit_partner,
    published,
    runtime_ratios,
    variance,
)

HOST = "fixturehost"
RUNTIMES = ("docker", "baremetal")
# Bare metal runs a little faster than a container; the fixture's runtime "physics".
RUNTIME_SPEED = {"docker": {}, "baremetal": {"L": 1.04, "S": 1.01, "B": 1.12}}
ENGINES = {
    "docker": {"engine": "Docker Engine", "version": "20.10.24", "storage_driver": "overlay2"},
    "baremetal": {
        "engine": "bare metal (chroot + cgroups)",
        "version": "6.1.0-fixture",
        "storage_driver": "none",
    },
}
MICROSERVICES = ["L", "S", "B"]
METRICS = {
    "L": [("gflops", "GFLOPS", True, 60.0)],
    "S": [
        ("copy", "MB/s", True, 45000.0),
        ("scale", "MB/s", True, 44000.0),
        ("add", "MB/s", True, 46000.0),
        ("triad", "MB/s", True, 45500.0),
    ],
    "B": [
        ("block_output", "KB/s", True, 280000.0),
        ("block_input", "KB/s", True, 340000.0),
        ("random_seeks", "seeks/s", True, 10500.0),
    ],
}
# True IR of target beside partner, per case (the fixture's "physics").
EFFECT = {
    ("L", "L"): {"2": -0.30, "3a": -0.32, "3b": -0.15},
    ("L", "S"): {"2": -0.22, "3a": -0.20, "3b": -0.05},
    ("L", "B"): {"2": 0.05, "3a": -0.03, "3b": -0.12},
    ("S", "S"): {"2": -0.55, "3a": -0.50, "3b": -0.06},
    ("S", "L"): {"2": -0.60, "3a": -0.40, "3b": -0.01},
    ("S", "B"): {"2": 0.01, "3a": -0.02, "3b": -0.03},
    ("B", "B"): {"2": -0.55, "3a": -0.56, "3b": -0.52},
    ("B", "L"): {"2": -0.10, "3a": -0.08, "3b": 0.02},
    ("B", "S"): {"2": -0.07, "3a": -0.05, "3b": -0.04},
}
NOISE = {"L": 0.03, "S": 0.04, "B": 0.06}
B_DECLARATION = {
    "name": "Bonnie++",
    "resource": "disk",
    "tool": "bonnie++ (Debian package)",
    "paper_tool": "Bonnie++ 1.03e",
    "stand_in_reason": "synthetic fixture: a declared stand-in with its reason",
    "metrics": [{"name": m, "unit": u, "higher_is_better": h} for m, u, h, _ in METRICS["B"]],
    "parameters": {},
    "server": False,
    "in_config": True,
}
PAIRS = {
    "microservices": MICROSERVICES,
    "cases": ["1", "2", "3a", "3b"],
    "repetitions": 1,
    "iterations": 12,
    "window_s": {"2": 60, "3a": 60, "3b": 60},
    "iteration_timeout_s": 300,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "2g"},
    "sizes": {
        "L": {"n": 5000},
        "S": {"array_elements": 20000000, "ntimes": 20},
        "B": {"file_size_mb": 4096, "direct_io": False},
    },
}


def config(runtimes) -> dict:
    """The validated config's shape: the pair study's keys under studies.pairs."""
    return {
        "host": HOST,
        "runtimes": list(runtimes),
        "runtime_options": {},
        "base_image": "debian:bookworm-slim",
        "studies": {"pairs": {**PAIRS, "runtimes": list(runtimes)}},
    }


def limits(case: str, k: int) -> tuple[dict, dict]:
    if case in ("2", "3a"):
        return {"cpuset": None, "cpus": None, "memory": None}, {
            "cpuset": "0-1",
            "memory_max": "9223372036854771712",
            "cpu_quota_us": "-1",
            "cpu_period_us": "100000",
            "nproc": "2",
            "cgroup_version": "1",
        }
    core = str(k - 1)
    return {"cpuset": core, "cpus": None, "memory": "2g"}, {
        "cpuset": core,
        "memory_max": str(2 * 1024**3),
        "cpu_quota_us": "-1",
        "cpu_period_us": "100000",
        "nproc": "1",
        "cgroup_version": "1",
    }


def make_metas(raw: Path, rng: np.random.Generator, runtimes=RUNTIMES) -> list[Path]:
    paths = []
    t = 1_790_000_000.0
    pairs = [(a, b) for i, a in enumerate(MICROSERVICES) for b in MICROSERVICES[i:]]
    for runtime, case in [(r, c) for r in runtimes for c in ("1", "2", "3a", "3b")]:
        groups = [(m,) for m in MICROSERVICES] if case == "1" else pairs
        for members in groups:
            pair = "+".join(members)
            started = t
            n = PAIRS["iterations"] if case == "1" else int(rng.integers(14, 22))
            mem, containers = [], []
            overlap = None if case == "1" else {"start": t + 1, "end": t + 1 + n * 3, "window_s": 60}
            for k, ms in enumerate(members, start=1):
                req, back = limits(case, k)
                its = []
                for i in range(1, n + 1):
                    s = t + 1 + (i - 1) * 3 + (0.2 if k == 2 else 0)
                    status = "ok"
                    if (case, pair, k, i) in {("3a", "L+B", 2, 5), ("2", "B+B", 1, 9)}:
                        status = "exit 1"
                    inside = case == "1" or i < n  # the last iteration overruns the overlap
                    its.append(
                        {
                            "iteration": i,
                            "start": s,
                            "end": s + 2.5,
                            "exit_code": 0 if status == "ok" else 1,
                            "status": status,
                            "in_overlap": inside,
                            "stdout": f"member{k}-{ms}/iter{i:04d}.out",
                            "stderr": f"member{k}-{ms}/iter{i:04d}.err",
                        }
                    )
                mem.append(
                    {
                        "member": k,
                        "microservice": ms,
                        "dir": f"member{k}-{ms}",
                        "limits_read_back": back,
                        "iterations": its,
                    }
                )
                if case != "2" or k == 1:
                    containers.append(
                        {
                            "name": f"c{k}",
                            "role": "member1+member2" if case == "2" else f"member{k}",
                            "limits_requested": req,
                        }
                    )
            t += 5 + n * 3
            meta = {
                "study": "pairs",
                "settings": {
                    "host": HOST,
                    "runtime": runtime,
                    "key": f"case{case}/{pair}",
                    "case": case,
                    "pair": pair,
                    "repetition": 1,
                    "iteration_timeout_s": PAIRS["iteration_timeout_s"],
                    "sizes": {m: PAIRS["sizes"][m] for m in members},
                    **({"iterations": n} if case == "1" else {"window_s": 60}),
                },
                "run_id": f"fixture{len(paths):04d}",
                "host_info": {
                    "hostname": HOST,
                    "cpu_model": "Fixture CPU @ 2.30GHz",
                    "cores": 2,
                    "memory_bytes": 4 * 1024**3,
                    "kernel": "6.1.0-fixture",
                    "os": "Linux-6.1.0-fixture-x86_64",
                    "loadavg_before": [0.12, 0.1, 0.05],
                },
                "runtime_info": {
                    "runtime": runtime,
                    **ENGINES[runtime],
                    "cgroup_version": "1",
                    "cgroup_driver": "cgroupfs",
                    "kernel": "6.1.0-fixture",
                    "os": "Debian GNU/Linux 12 (bookworm)",
                },
                "started": started,
                "finished": t,
                "overlap": overlap,
                "members": mem,
                "containers": containers,
                "events": [],
                "telemetry": {"interval_s": 0.5, "samples": int(2 * (t - started)), "file": "telemetry.tsv"},
                "n_iterations": sum(len(m["iterations"]) for m in mem),
                "n_failed": sum(it["status"] != "ok" for m in mem for it in m["iterations"]),
            }
            p = raw / HOST / runtime / f"case{case}" / pair / "rep1" / "meta.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(meta))
            paths.append(p)
    return paths


def samples_of(metas: list[Path], rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for p in metas:
        meta = json.loads(p.read_text())
        s = meta["settings"]
        members = [m["microservice"] for m in meta["members"]]
        for k, m in enumerate(meta["members"]):
            target = m["microservice"]
            partner = members[1 - k] if len(members) == 2 else ""
            effect = 0.0 if s["case"] == "1" else EFFECT[(target, partner)][s["case"]]
            speed = RUNTIME_SPEED[s["runtime"]].get(target, 1.0)
            noise = NOISE[target] * (4 if (s["case"], target, partner) == ("3a", "S", "S") else 1)
            for it in m["iterations"]:
                # Telemetry over the iteration: CPU pressure where two compete, and none alone.
                psi = 0.01 + (0.25 if s["case"] in ("2", "3a") else 0.0) + 0.02 * rng.random()
                telemetry = {"psi_cpu_some": psi, "psi_cpu_full": psi / 3, "psi_memory_some": 0.0,
                             "psi_io_some": 0.001, "ctxt_per_s": 900.0, "throttled": 0.0, "nr_throttled": 0,
                             "memory_failcnt": 0, "oom_kill": 0}  # fmt: skip
                for metric, unit, hib, base in METRICS[target]:
                    ok = it["status"] == "ok"
                    value = base * speed * (1 + effect) * (1 + noise * rng.standard_normal()) if ok else None
                    rows.append(
                        {
                            "host": s["host"],
                            "runtime": s["runtime"],
                            "case": s["case"],
                            "target": target,
                            "partner": partner,
                            "repetition": 1,
                            "member": m["member"],
                            "iteration": it["iteration"],
                            "metric": metric,
                            "value": value,
                            "unit": unit,
                            "higher_is_better": hib,
                            "start": it["start"],
                            "end": it["end"],
                            "in_overlap": it["in_overlap"],
                            "status": it["status"],
                            **telemetry,
                        }
                    )
    return pd.DataFrame(rows)


def end_of_study(samples: pd.DataFrame) -> pd.DataFrame:
    """The Case 1 samples as if re-measured an hour after the study (drift_check), 3 % worse."""
    end = samples[samples["case"] == "1"].copy()
    worse = np.where(end["higher_is_better"].astype(str) == "True", 0.97, 1.03)
    return end.assign(
        case="1-end", value=end["value"] * worse, start=end["start"] + 3600, end=end["end"] + 3600
    )


def make_fixture(
    out: Path, n_resamples: int = 400, runtimes=RUNTIMES, published_dir: Path | None = None
) -> Path:
    """Write the stats set to out/ (environment.json, run_order.tsv, pairs/*.tsv) and return out.

    published_dir: the papers' tables the comparison reads (default: tests/fixtures/published)."""
    out = Path(out)
    rng = np.random.default_rng(20240601)
    metas = make_metas(out / "raw", rng, runtimes)
    cfg = config(runtimes)
    runs = run_tables.runs_table(metas)
    env = run_info.environment(metas, [], cfg, [])
    env["microservices"] = {k: v for k, v in env["microservices"].items() if k in MICROSERVICES}
    for v in env["microservices"].values():
        v["in_config"] = True
    env["microservices"]["B"] = B_DECLARATION
    env["images"] = [
        {
            "image": ms,
            "runtime": runtime,
            "ref": f"interference/{ms.lower()}:fixture",
            "id": "sha256:" + f"{i:02d}" * 32,
            "tool_versions": {"gcc": "4:12.2.0-3"},
            "built_on": "interference/base:fixture",
        }
        for runtime in runtimes
        for i, ms in enumerate(MICROSERVICES)
    ]
    pairs = out / "pairs"
    pairs.mkdir(parents=True, exist_ok=True)
    runs.to_csv(pairs / "runs.tsv", sep="\t", index=False, float_format="%.6f")
    members = run_tables.members_table(metas, "pairs")
    members.to_csv(pairs / "run_members.tsv", sep="\t", index=False, float_format="%.6f")
    # How the runs followed the plan, as the run_order_table rule writes it (the default plan).
    order = order_agreement.run_order_table(
        order_agreement.read_runs([pairs / "runs.tsv"]), {"shuffle": True, "seed": 1}
    )
    order.to_csv(out / "run_order.tsv", sep="\t", index=False, float_format="%.6f")
    (out / "environment.json").write_text(json.dumps(env, indent=1))
    samples = samples_of(metas, rng)
    tables = {
        "summary": statistics.summarize(samples),
        "interference": statistics.interference_ratios(samples, n_resamples=n_resamples),
        "anova": hypothesis_tests.anova(samples),
        "posthoc": hypothesis_tests.posthoc(samples),
        "runtimes": runtime_ratios.runtime_ratios(samples, n_resamples=n_resamples),
        "contention": iteration_telemetry.contention(samples),
        "split": limit_partner.split(samples),
        "variance_components": variance.variance_components(samples),
        # The baselines again an hour later, 3 % slower (higher is better) or 3 % longer.
        "drift": drift.drift(pd.concat([samples, end_of_study(samples)]), 1),
    }
    tables["pressure_correlation"] = iteration_telemetry.pressure_correlation(tables["contention"])
    tables["contention_by_case"] = iteration_telemetry.by_case(tables["contention"])
    for name, df in tables.items():
        write(df, pairs / f"{name}.tsv")
    inputs = {"summary": pairs / "summary.tsv", "interference": pairs / "interference.tsv"}
    pub = published_dir or Path(__file__).resolve().parent / "fixtures" / "published"
    write(published.comparison(inputs, 1, published_dir=pub), pairs / "published.tsv")
    write(fidelity.fidelity({"published": pairs / "published.tsv"}), pairs / "fidelity.tsv")
    # The scorecard of the papers' findings, as the findings rule makes it.
    catalogue = scorecard.load_catalogue(
        Path(__file__).resolve().parents[1] / "report/published/findings.yaml"
    )
    write(scorecard.scorecard(catalogue, out, ["pairs"], pub), out / "findings.tsv")
    return out


if __name__ == "__main__":
    print(make_fixture(Path(sys.argv[1]), runtimes=tuple(sys.argv[2:]) or RUNTIMES))
