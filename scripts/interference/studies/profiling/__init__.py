"""The profiling study (issue 35): each microservice measured alone and beside a tunable bubble on
each shared resource, so that pairs never measured can be predicted (predict.py), the prediction
checked on the pair study's measured pairs (validate.py) and placements advised (advise.py).

  run keys  plan.py (e.g. 1u/L/alone, 2/L/cpu-0.5, 3a/Q/memory+S)   runner  execute.py
  parser    parse.py     tables  statistics.py (sensitivity, limit_effect, summary), pressure.py,
                                 cpu_speed.py (the quota sweep: the CPU-share model's profile)"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from interference.core.microservices import registry as microservices
from interference.core.microservices import sizes_properties, unknown_in
from interference.core.table_schema import INTEGER, NUMBER, TEXT, TableSchema
from interference.host import cgroups
from interference.stats.described import DESCRIBED
from interference.studies.base import KeyFormat, RunKey, Study, StudyConfigError, Table
from interference.studies.profiling import plan
from interference.studies.profiling.plan import BUBBLE, PROBE, ProfilingRun

ID = r"[A-Z]+"
NUMBER_RE = r"[0-9]+(?:\.[0-9]+)?"
RESOURCE = "|".join(plan.RESOURCES)
# What each run sets itself on the bubble and the probe: not sizes a config may give.
PER_RUN = {BUBBLE: ("resource", "intensity", "seconds"), PROBE: ("resource",)}
DEFAULT_INTENSITIES = {
    "cpu": [0.5, 1, 2],
    "memory": [4, 64, 512],
    "disk": [10, 50, 200],
    "network": [0.5, 2, 8],
}
WHOLE_SECONDS = {"type": "integer", "minimum": 1}


# The columns of its tables (the statistics step checks each before writing it; the predictor,
# studies/profiling/profiles.py, reads sensitivity, pressure and limit_effect).
_WHERE = TableSchema(host=TEXT, runtime=TEXT, microservice=TEXT)
_CI = TableSchema(ci_low=NUMBER, ci_high=NUMBER)
SUMMARY = TableSchema(
    # intensity as the samples carry it: text, empty where nothing was beside (alone, probe alone).
    TableSchema(host=TEXT, runtime=TEXT, case=TEXT, target=TEXT, resource=TEXT, intensity=TEXT),
    TableSchema(partner=TEXT, metric=TEXT),
    DESCRIBED,
)
SENSITIVITY = TableSchema(
    _WHERE,
    TableSchema(placement=TEXT, resource=TEXT, intensity=NUMBER, metric=TEXT, degradation=NUMBER),
    _CI,
    TableSchema(runs=INTEGER, ci_level=TEXT, reason=TEXT),
)
LIMIT_EFFECT = TableSchema(
    _WHERE, TableSchema(metric=TEXT, effect=NUMBER), _CI, TableSchema(ci_level=TEXT, reason=TEXT)
)
CPU_SPEED = TableSchema(
    _WHERE,
    TableSchema(metric=TEXT, case=TEXT, cores=NUMBER, busy=NUMBER, speed=NUMBER),
    _CI,
    TableSchema(cpu_cores=NUMBER, threads=INTEGER, runs=INTEGER, ci_level=TEXT, reason=TEXT),
)
PRESSURE = TableSchema(
    _WHERE,
    TableSchema(placement=TEXT, resource=TEXT, pressure=NUMBER),
    _CI,
    TableSchema(ci_level=TEXT, note=TEXT),
)


class ProfilingStudy(Study):
    name = "profiling"
    title = "Profiles for placement advice: each microservice alone, under CPU limits and beside load"
    report_section = Path(__file__).parent / "section.qmd"
    run_key = KeyFormat(
        "{case}/{target}/{beside}",
        case="1u|1q|1k|1|2|3a|3b",
        target=ID,
        beside=f"alone|{plan.QUOTA}-{NUMBER_RE}|{plan.BUSY}-[0-9]+|(?:{RESOURCE})(?:-{NUMBER_RE}|\\+{ID})?",
    )
    tables = {
        "summary": Table("statistics:summary", schema=SUMMARY),
        "sensitivity": Table("statistics:sensitivity", schema=SENSITIVITY),
        "limit_effect": Table("statistics:limit_effect", schema=LIMIT_EFFECT),
        "pressure": Table("pressure:pressure", schema=PRESSURE),
        "cpu_speed": Table("cpu_speed:cpu_speed", schema=CPU_SPEED),
    }
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "microservices": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "string"},
                "default": ["L", "S", "B", "NS", "NR", "Y"],
            },
            "resources": {
                "type": "array",
                "minItems": 0,
                "uniqueItems": True,
                "items": {"enum": list(plan.RESOURCES)},
                "default": list(plan.RESOURCES),
            },
            "intensities": {
                "type": "object",
                "additionalProperties": False,
                "description": "bubble intensities: cpu cores, memory MB, disk MB/s, network Gbit/s",
                "properties": {
                    r: {
                        "type": "array",
                        "minItems": 1,
                        "uniqueItems": True,
                        "items": {"type": "number", "exclusiveMinimum": 0},
                        "default": DEFAULT_INTENSITIES[r],
                    }
                    for r in plan.RESOURCES
                },
                "default": {},
            },
            "placements": {
                "type": "array",
                "minItems": 0,
                "uniqueItems": True,
                "items": {"enum": list(plan.PLACEMENTS)},
                "default": list(plan.DEFAULT_PLACEMENTS),
                "description": "2: one container; 3a: two unlimited; 3b: two limited to disjoint cores "
                "(the pair study's Case 3b: its pressures measured with the partner limited); none: no "
                "bubble, no probe",
            },
            "quotas": {
                "type": "array",
                "uniqueItems": True,
                "items": {"type": "number", "exclusiveMinimum": 0},
                "default": [],
                "description": "CPU quotas (cores) each microservice runs alone under, every core allowed: "
                "its speed at a CPU share (cpu_speed.tsv, the CPU-share model)",
            },
            "busy": {
                "type": "array",
                "uniqueItems": True,
                "items": {"type": "integer", "minimum": 1, "maximum": 16},
                "default": [],
                "description": "numbers of busy containers (each spinning one core) each microservice runs "
                "beside, unlimited: its speed at the share the scheduler gives it among busy neighbours "
                "(cpu_speed.tsv case 1k, the model cpu-busy)",
            },
            "iterations": {
                **WHOLE_SECONDS,
                "default": 3,
                "description": "iterations alone, each in a fresh container",
            },
            "repetitions": {**WHOLE_SECONDS, "default": 1, "description": "runs of each key"},
            "window_s": {**WHOLE_SECONDS, "default": 10, "description": "seconds beside a bubble or partner"},
            "window_s_per_microservice": {
                "type": "object",
                "additionalProperties": WHOLE_SECONDS,
                "default": {},
                "description": "a longer window for a slow microservice (B: 25), also as the probe's partner",
            },
            "iteration_timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 300},
            "network_server_cpus": {
                "enum": ["member", "any"],
                "default": "member",
                "description": "where a network microservice's server runs: on the cores of its "
                "microservice's container where that is limited to cores (Case 1, placement 3b), or "
                "on any core (before 2026-11-29); as the pair study's key",
            },
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "description": "Case 1's limits, as the pair study's",
                "properties": {
                    "cpu_mode": {"enum": ["cpuset", "quota"], "default": "cpuset"},
                    "cpus": {"type": "integer", "minimum": 1, "default": 1},
                    "memory": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?[kmgKMG]?$", "default": "2g"},
                },
                "default": {},
            },
            "sizes": {"type": "object", "default": {}, "description": "as the pair study's sizes"},
        },
    }

    def config_schema(self) -> dict:
        schema = copy.deepcopy(self.schema)
        sizes = schema["properties"]["sizes"]
        sizes["additionalProperties"] = False
        sizes["properties"] = sizes_properties(PER_RUN)
        return schema

    def check(self, cfg: dict) -> None:
        if problem := unknown_in(cfg["microservices"], "studies.profiling.microservices", excluded=PER_RUN):
            raise StudyConfigError(problem)
        for i, ms in enumerate(cfg["microservices"]):
            if ms in PER_RUN:
                raise StudyConfigError(
                    f"key studies.profiling.microservices[{i}] has the value {ms!r}, the study's own "
                    "bubble (X) or probe (Q), which it runs itself beside the microservices"
                )
        for ms in cfg["window_s_per_microservice"]:
            if ms not in cfg["microservices"]:
                raise StudyConfigError(
                    f"key studies.profiling.window_s_per_microservice has {ms!r}, which is not among "
                    f"studies.profiling.microservices ({', '.join(cfg['microservices'])})"
                )
        cores = os.cpu_count() or 1
        if cfg["limits"]["cpus"] > cores:
            raise StudyConfigError(
                f"key studies.profiling.limits.cpus has the value {cfg['limits']['cpus']}, "
                f"but this host has {cores} cores"
            )
        if "3b" in cfg["placements"]:
            if cfg["limits"]["cpu_mode"] == "cpuset" and 2 * cfg["limits"]["cpus"] > cores:
                raise StudyConfigError(
                    f"key studies.profiling.limits.cpus has the value {cfg['limits']['cpus']}, but placement "
                    f"3b pins its two containers to {cfg['limits']['cpus']} cores each and this host has {cores}"
                )
            limit_mb = cgroups.memory_bytes(cfg["limits"]["memory"]) / 2**20
            if "memory" in cfg["resources"] and max(cfg["intensities"]["memory"]) >= limit_mb:
                raise StudyConfigError(
                    f"key studies.profiling.intensities.memory has {max(cfg['intensities']['memory']):g} MB, "
                    f"but placement 3b limits the bubble's container to {cfg['limits']['memory']}: it would be killed"
                )
            if not plan.resources_in("3b", cfg["resources"]):
                raise StudyConfigError(
                    "key studies.profiling.placements has 3b, whose containers have cores of their own: "
                    "it has no cpu bubble, and studies.profiling.resources names no other resource"
                )
        if cfg["quotas"] and max(cfg["quotas"]) > cores:
            raise StudyConfigError(
                f"key studies.profiling.quotas has {max(cfg['quotas']):g} cores, but this host has {cores}: "
                "a quota above them limits nothing"
            )
        if "cpu" in cfg["resources"] and max(cfg["intensities"]["cpu"]) > cores:
            raise StudyConfigError(
                f"key studies.profiling.intensities.cpu has {max(cfg['intensities']['cpu']):g} cores, "
                f"but this host has {cores}: a bubble cannot keep more busy"
            )

    def needs(self, cfg: dict) -> set[str]:
        out = {
            "volumes",
            "limit:memory",
            "limit:cpuset" if cfg["limits"]["cpu_mode"] == "cpuset" else "limit:cpus",
        }
        if any(microservices()[m].server for m in cfg["microservices"]):
            out.add("networks")
        if cfg["quotas"]:
            out.add("limit:cpus")
        return out

    def key_of(self, run: ProfilingRun) -> str:
        return self.run_key.key(**run.key_fields())

    def run_of(self, key: str) -> ProfilingRun:
        return ProfilingRun.from_key_fields(self.run_key.read(key))

    def runs(self, cfg: dict) -> list[RunKey]:
        reps = range(1, cfg["repetitions"] + 1)
        return [RunKey(self.key_of(run), r) for run in plan.runs(cfg) for r in reps]

    def images(self, cfg: dict) -> list[str]:
        names = {name for run in plan.runs(cfg) for name in plan.image_names(run)}
        return ["base", *sorted(names)]

    def run_images(self, cfg: dict, key: str) -> list[str]:
        return plan.image_names(self.run_of(key))

    def settings(self, cfg: dict, key: str) -> dict:
        """What changes the run: its case and members with their sizes; Case 1's limits; alone,
        the iterations; beside something, its window (the slower member's)."""
        run = self.run_of(key)
        out = {"case": run.case, "target": run.target, "iteration_timeout_s": cfg["iteration_timeout_s"]}
        sizes = {run.target: dict(cfg["sizes"][run.target])}
        if run.resource:
            out["resource"] = run.resource
        if run.target == PROBE:
            probe = sizes[PROBE]
            sizes[PROBE] = {"resource": run.resource, **{k: probe[k] for k in plan.PROBE_SIZES[run.resource]}}
        if run.alone:
            out["iterations"] = cfg["iterations"]
            if run.quota is not None:
                out["quota"] = run.quota
            if run.busy is not None:  # the spinners run from before the first iteration to after the last
                out["busy"] = run.busy
                seconds = cfg["iterations"] * (cfg["iteration_timeout_s"] + 5)
                sizes[BUBBLE] = {"resource": "cpu", "intensity": 1, "seconds": seconds}
            if run.case == "1":
                out["limits"] = copy.deepcopy(cfg["limits"])
        else:
            if run.case in plan.LIMITED_PLACEMENTS:
                out["limits"] = copy.deepcopy(cfg["limits"])
            measured = run.partner or run.target
            out["window_s"] = plan.window_s(cfg, measured) if measured != PROBE else cfg["window_s"]
        if run.beside_bubble:
            out["intensity"] = run.intensity
            seconds = out["window_s"] + plan.BUBBLE_MARGIN_S
            sizes[BUBBLE] = {"resource": run.resource, "intensity": run.intensity, "seconds": seconds}
        if run.partner:
            out["partner"] = run.partner
            sizes[run.partner] = dict(cfg["sizes"][run.partner])
        # Only where the rule moves a server (a container with cores of its own): else unchanged.
        pinned = "limits" in out and cfg["limits"]["cpu_mode"] == "cpuset"
        if pinned and any(microservices()[m].server for m in sizes):
            out["server_cpus"] = cfg["network_server_cpus"]
        return {**out, "sizes": sizes}

    def fixed_seconds(self, settings: dict) -> float:
        return plan.fixed_seconds(settings)

    def expected_seconds(self, settings: dict) -> float | None:
        return plan.run_seconds(settings)
