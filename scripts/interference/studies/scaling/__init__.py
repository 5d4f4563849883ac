"""Paper 001's Experiment 1 (its Fig. 3): CPU scaling. N concurrent sysbench CPU instances, one
per entity (container, LXC container, nested child, VM, or bare-metal process), without
limits, as in the paper; each instance runs `iterations` times; the slowdown is an instance's
mean execution time relative to one instance on bare metal.

  results/raw/<host>/<runtime>/scaling/n<N>/rep<r>/instance<k>/...   (the loop's files)

Run key n<N>; the statistics are in statistics.py, the report section in section.qmd."""

from __future__ import annotations

import os
from pathlib import Path

from interference.core import entity_times
from interference.core.entity_memory import check_memory
from interference.core.table_schema import INTEGER, NUMBER, TEXT, TableSchema
from interference.stats.described import DESCRIBED
from interference.studies.base import Compared, KeyFormat, RunKey, Study, StudyConfigError, Table

HERE = Path(__file__).parent
MICROSERVICE = "P"  # sysbench cpu (containers/sysbench)


# The columns of its tables (validated when the statistics step writes them).
SUMMARY = TableSchema(TableSchema(host=TEXT, runtime=TEXT, instances=INTEGER, metric=TEXT), DESCRIBED)
SLOWDOWN = TableSchema(
    host=TEXT,
    runtime=TEXT,
    instances=INTEGER,
    n=INTEGER,
    runs=INTEGER,
    mean_s=NUMBER,
    reference=TEXT,
    reference_mean_s=NUMBER,
    reference_runs=INTEGER,
    slowdown=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    ci_method=TEXT,
    ci_level=TEXT,  # runs, or iterations where a side had one run (stats/run_level.py)
    ci_df=NUMBER,
    note=TEXT,
)


class ScalingStudy(Study):
    name = "scaling"
    title = "CPU scaling: N concurrent sysbench instances (paper 001, Fig. 3)"
    run_key = KeyFormat("n{instances}", instances=r"[0-9]+")
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "instances": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 1024},
                "minItems": 1,
                "uniqueItems": True,
                "default": [1, 2, 4],
                "description": "N: concurrent instances, one per entity (paper: 1..64)",
            },
            "repetitions": {"type": "integer", "minimum": 1, "default": 1},
            "iterations": {
                "type": "integer",
                "minimum": 1,
                "default": 3,
                "description": "executions per instance (paper: 10)",
            },
            "iteration_timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 300},
            "max_prime": {"type": "integer", "minimum": 1, "default": 40000},
            "events": {"type": "integer", "minimum": 1, "default": 1000},
        },
    }
    tables = {
        "summary": Table("statistics:summary", schema=SUMMARY),
        "slowdown": Table("statistics:slowdown", schema=SLOWDOWN),
    }
    report_section = HERE / "section.qmd"
    compared = (Compared("slowdown", ("runtime", "instances", "reference"), "slowdown"),)

    def check(self, cfg: dict) -> None:
        try:
            check_memory(cfg["runtimes"], max(cfg["instances"]))
        except ValueError as e:
            raise StudyConfigError(f"studies.scaling.instances: {e}") from None

    def runs(self, cfg):
        reps = range(1, cfg["repetitions"] + 1)
        return [RunKey(self.run_key.key(instances=n), r) for n in sorted(cfg["instances"]) for r in reps]

    def images(self, cfg):
        return [MICROSERVICE]

    def run_images(self, cfg, key):
        return [MICROSERVICE]

    def settings(self, cfg, key):
        keys = ("iterations", "iteration_timeout_s", "max_prime", "events")
        return {"instances": int(self.run_key.read(key)["instances"]), **{k: cfg[k] for k in keys}}

    def run_row(self, meta):
        return {"instances": meta["settings"]["instances"]}

    def finding_needs(self, check, args):
        """runtime_ratio: the runtime's and bare metal's (the reference) smallest N (findings.py)."""
        return {"runtimes": list(dict.fromkeys(["baremetal", args["runtime"]])), "instances": [1]}

    def expected_seconds(self, settings):
        """The runtime's start-up and each instance's start, then each execution, N instances
        sharing the host's cores (sub-linearly past them, as measured)."""
        c, rt = entity_times.constants("scaling"), settings["runtime"]
        n, cores = settings["instances"], os.cpu_count() or 1
        execution = settings["events"] * c["prime_event_s"] * (settings["max_prime"] / 40000) ** 1.5
        shared = max(1.0, n / cores) ** c["oversubscription_exponent"]
        start = entity_times.per_runtime("scaling", "run_s", rt) + n * entity_times.per_runtime(
            "scaling", "instance_s", rt
        )
        return start + settings["iterations"] * shared * execution
