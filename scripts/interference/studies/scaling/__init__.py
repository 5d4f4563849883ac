"""Paper 001's Experiment 1 (its Fig. 3): CPU scaling. N concurrent sysbench CPU instances, one
per entity (container, LXC container, nested child, VM, or bare-metal process), without
limits, as in the paper; each instance runs `iterations` times; the slowdown is an instance's
mean execution time relative to one instance on bare metal.

  results/raw/<host>/<runtime>/scaling/n<N>/rep<r>/instance<k>/...   (the loop's files)

Run key n<N>; the statistics are in statistics.py, the report section in section.qmd."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from interference import parsers
from interference.entity_memory import check_memory
from interference.loop import RELEASED_BY_FILE, loop_command, read_iterations, read_limits, write_start_file
from interference.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.base import RunKey, Study, StudyConfigError, Table
from interference.studies.scaling import findings, statistics

HERE = Path(__file__).parent
MICROSERVICE = "P"  # sysbench cpu (containers/sysbench)
WAIT_MARGIN_S = 60.0


class ScalingStudy(Study):
    name = "scaling"
    title = "CPU scaling: N concurrent sysbench instances (paper 001, Fig. 3)"
    key_pattern = r"n[0-9]+"
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
    findings = findings.CHECKS
    tables = {
        "summary": Table(statistics.summary),
        "slowdown": Table(statistics.slowdown),
    }
    report_section = HERE / "section.qmd"

    def check(self, cfg: dict) -> None:
        try:
            check_memory(cfg["runtimes"], max(cfg["instances"]))
        except ValueError as e:
            raise StudyConfigError(f"studies.scaling.instances: {e}") from None

    def runs(self, cfg):
        reps = range(1, cfg["repetitions"] + 1)
        return [RunKey(f"n{n}", r) for n in sorted(cfg["instances"]) for r in reps]

    def images(self, cfg):
        return [MICROSERVICE]

    def run_images(self, cfg, key):
        return [MICROSERVICE]

    def settings(self, cfg, key):
        keys = ("iterations", "iteration_timeout_s", "max_prime", "events")
        return {"instances": int(key[1:]), **{k: cfg[k] for k in keys}}

    def code(self, step):
        return {
            "statistics": [HERE / "statistics.py"],
            "findings": [HERE / "findings.py"],
            "report": [HERE / "section.qmd", HERE / "section.py"],
        }.get(step, [HERE / "__init__.py"])

    def execute(self, run) -> dict:
        s = run.settings
        ms = registry()[MICROSERVICE]
        env = ms.container_env({"max_prime": s["max_prime"], "events": s["events"]})
        names = []
        for k in range(1, s["instances"] + 1):
            command = loop_command(
                MICROSERVICE,
                f"instance{k}",
                1,
                RELEASED_BY_FILE,
                "count",
                s["iterations"],
                s["iteration_timeout_s"],
            )
            spec = ContainerSpec(
                name=run.name(f"i{k}"),
                image=run.images[MICROSERVICE]["id"],
                command=command,
                env=env,
                binds=[(str(run.outdir), "/results")],
                labels=run.labels,
            )
            run.start(spec, f"instance{k}")
            names.append(spec.name)
        start_at, _ = write_start_file(run.outdir)
        deadline = start_at + s["iterations"] * s["iteration_timeout_s"] + WAIT_MARGIN_S
        run.wait_all(names, deadline)
        instances = []
        for k in range(1, s["instances"] + 1):
            d = run.outdir / f"instance{k}"
            its = read_iterations(d, s["iteration_timeout_s"])
            instances.append(
                {
                    "instance": k,
                    "dir": d.name,
                    "limits_read_back": read_limits(d / "limits.txt"),
                    "iterations": its,
                }
            )
        n_its = sum(len(i["iterations"]) for i in instances)
        failed = sum(it["status"] != "ok" for i in instances for it in i["iterations"])
        failed += s["instances"] * s["iterations"] - n_its  # iterations that never ran
        return {"start_at": start_at, "instances": instances, "n_iterations": n_its, "n_failed": failed}

    def parse(self, meta, raw_dir) -> pd.DataFrame:
        s = meta["settings"]
        parse = parsers.get(registry()[MICROSERVICE].parser)
        rows = []
        for inst in meta["instances"]:
            for it in inst["iterations"]:
                value, status = None, it["status"]
                if status == "ok":
                    try:
                        out = (raw_dir / it["stdout"]).read_text(errors="replace")
                        value = parse(out, "")["execution_time"]
                    except (parsers.ParseError, OSError) as e:
                        status = str(e) if isinstance(e, parsers.ParseError) else "missing output"
                rows.append(
                    {
                        "host": s["host"],
                        "runtime": s["runtime"],
                        "instances": s["instances"],
                        "repetition": s["repetition"],
                        "instance": inst["instance"],
                        "iteration": it["iteration"],
                        "metric": "execution_time",
                        "value": value,
                        "unit": "s",
                        "higher_is_better": False,
                        "start": it["start"],
                        "end": it["end"],
                        "status": status,
                    }
                )
        return pd.DataFrame(rows, columns=statistics.SAMPLE_COLUMNS)

    def run_row(self, meta):
        return {"instances": meta["settings"]["instances"]}
