"""The papers' pair study (000, 002, 004): microservices alone with cgroup limits (Case 1) and
in pairs — two in one container (2), two containers without (3a) or with (3b) limits; and, for
the placement advice, triples in the same cases and in 2-3a (two share a container, one apart).

  run key   case<case>/<pair>, e.g. case1/L, case1u/L, case3b/L+S; case1-end/L: Case 1 again at the end
  runner    execute.py (+ adaptive.py, phases.py)   parser  parse.py   findings  findings/
  tables    statistics/ (tables.py names each table's function)   report  section.qmd (+ section/)"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from interference import REPO_ROOT
from interference.core.microservices import registry as microservices
from interference.core.microservices import sizes_properties, unknown_in
from interference.core.yaml_files import load_once
from interference.studies.base import Compared, KeyFormat, RunKey, Study, StudyConfigError, Table
from interference.studies.pairs import cases, check_registry, duration, phases, schemas
from interference.studies.pairs.records import PairKey

HERE = Path(__file__).resolve().parent
PUBLISHED_DIR = REPO_ROOT / "report" / "published"
# The papers' tables the published comparison reads (statistics/published.py).
PUBLISHED_FILES = (PUBLISHED_DIR / "means.tsv", PUBLISHED_DIR / "interference_ratios.tsv")


def memory_mib(text: str) -> float:
    """A docker memory value (512m, 2g, 1073741824) in MiB."""
    scale = {"k": 1 / 1024, "m": 1, "g": 1024}
    unit = text[-1].lower()
    return float(text[:-1]) * scale[unit] if unit in scale else float(text) / 1024**2


class PairsStudy(Study):
    name = "pairs"
    title = "Interference of microservice pairs (Cases 1, 2, 3a, 3b)"  # and triples, where configured
    # case1-end/L: Case 1 again at the end (drift check). Read and made only through PairKey.
    run_key = KeyFormat(
        "case{case}/{pair}", case="|".join([*cases.CASES, cases.END]), pair=r"[A-Z]+(?:\+[A-Z]+){0,2}"
    )
    report_section = HERE / "section.qmd"
    compared = (
        Compared(
            "interference",
            ("runtime", "case", "target", "partner", "metric"),
            "ir",
            "ir_ci_low",
            "ir_ci_high",
        ),
        Compared(
            "runtimes",
            ("target", "metric", "runtime", "reference"),
            "relative",
            "relative_ci_low",
            "relative_ci_high",
        ),
    )
    # Each run's members as rows of run_members.tsv (runs.py: member_rows).
    member_schema = schemas.RUN_MEMBERS
    # The functions are in statistics/tables.py, the columns in schemas.py; each table of the
    # study proper leaves out the baselines re-measured at the end and, unless it uses it, Case 1u.
    tables = {
        "summary": Table("statistics.tables:summary", schema=schemas.SUMMARY),
        "interference": Table("statistics.tables:interference", threads=4, schema=schemas.INTERFERENCE),
        "anova": Table("statistics.tables:anova", schema=schemas.ANOVA),
        "posthoc": Table("statistics.tables:posthoc", threads=2, schema=schemas.POSTHOC),
        "runtimes": Table("statistics.tables:runtimes", schema=schemas.RUNTIMES),
        "published": Table(
            "statistics.tables:published",
            needs=("summary", "interference"),
            files=PUBLISHED_FILES,
            schema=schemas.PUBLISHED,
        ),
        # Each microservice's variance between iterations and between runs, and the repetitions
        # that reach a +-5 % CI on this host (Kalibera and Jones's cost model).
        # Runs priced by their measured durations (runs.tsv).
        "variance_components": Table(
            "statistics.tables:variance_components",
            needs=("samples", "runs"),
            schema=schemas.VARIANCE_COMPONENTS,
        ),
        # Our own fidelity target: the share of the papers' pairings whose direction we have.
        "fidelity": Table("statistics.tables:fidelity", needs=("published",), schema=schemas.FIDELITY),
        # The papers' placement questions (one container or two; limits or none; the worst
        # placement), asked of their IRs and of ours.
        "case_contrasts": Table(
            "statistics.tables:case_contrasts", needs=("published",), schema=schemas.CASE_CONTRASTS
        ),
        "worst_placements": Table(
            "statistics.tables:worst_placements", needs=("published",), schema=schemas.WORST_PLACEMENTS
        ),
        # Two or more hosts (results imported from another machine); empty with one.
        "hosts": Table("statistics.tables:hosts", schema=schemas.HOSTS),
        "host_anova": Table("statistics.tables:host_anova", schema=schemas.HOST_ANOVA),
        # Each measured iteration beside the run's telemetry over it (empty without telemetry).
        "contention": Table("statistics.tables:contention", schema=schemas.CONTENTION),
        # Performance against CPU pressure over the concurrent iterations (Spearman, per target).
        "pressure_correlation": Table(
            "statistics.tables:pressure_correlation",
            needs=("contention",),
            schema=schemas.PRESSURE_CORRELATION,
        ),
        # The telemetry per case (means of the shares, sums of the counters) the report shows.
        "contention_by_case": Table(
            "statistics.tables:contention_by_case", needs=("contention",), schema=schemas.CONTENTION_BY_CASE
        ),
        # Each Case 2/3a IR as the limit's effect (1u against 1) and the partner's (against 1u).
        "split": Table("statistics.tables:split", threads=2, schema=schemas.SPLIT),
        # Case 1 re-measured after all other runs against the first (empty without drift_check).
        "drift": Table("statistics.tables:drift_table", schema=schemas.DRIFT),
    }

    def config_schema(self) -> dict:
        schema = load_once(HERE / "schema.yaml")
        sizes = schema["properties"]["sizes"]
        sizes["additionalProperties"] = False
        sizes["properties"] = sizes_properties()
        return schema

    def check(self, cfg: dict) -> None:
        if problem := unknown_in(cfg["microservices"], "studies.pairs.microservices"):
            raise StudyConfigError(problem)
        named = [("pairs", i, p) for i, p in enumerate(cfg.get("pairs", []))]
        for key, i, pair in named + [("triples", i, t) for i, t in enumerate(cfg.get("triples") or [])]:
            strangers = [m for m in cases.members_of(pair) if m not in cfg["microservices"]]
            if strangers:
                raise StudyConfigError(
                    f"key studies.pairs.{key}[{i}] has the value {pair!r}, but {', '.join(strangers)} is not "
                    f"among studies.pairs.microservices ({', '.join(cfg['microservices'])})"
                )
        limits = cfg["limits"]
        cores = len(os.sched_getaffinity(0))  # those this machine lets the runs use (cases.fits too)
        if "3b" in cfg["cases"] and limits["cpu_mode"] == "cpuset" and 2 * limits["cpus"] > cores:
            raise StudyConfigError(
                f"key studies.pairs.limits.cpus has the value {limits['cpus']}, but Case 3b pins its two "
                f"containers to disjoint cores and this host has {cores}; use at most "
                f"{cores // 2} or limits.cpu_mode: quota"
            )
        if "B" in cfg["microservices"]:
            self._check_bonnie(cfg["sizes"]["B"], limits["memory"])
        adaptive = cfg.get("adaptive", {})
        if adaptive.get("max_iterations", cfg["iterations"]) < cfg["iterations"]:
            raise StudyConfigError(
                f"key studies.pairs.adaptive.max_iterations has the value {adaptive['max_iterations']}, below "
                f"iterations ({cfg['iterations']}), the minimum it continues from"
            )
        for case in set(cfg["cases"]) - set(cases.ALONE_CASES):
            if adaptive.get("window_cap_s", cfg["window_s"][case]) < cfg["window_s"][case]:
                raise StudyConfigError(
                    f"key studies.pairs.adaptive.window_cap_s has the value {adaptive['window_cap_s']}, below "
                    f"window_s of Case {case} ({cfg['window_s'][case]}), the window it extends"
                )

        self._check_phases(cfg)

    @staticmethod
    def _check_phases(cfg: dict) -> None:
        """A phased window is fixed before it opens: no adaptive rule may move it."""
        if "phases" in cfg and "min_overlap_samples" in cfg.get("adaptive", {}):
            raise StudyConfigError(
                "keys studies.pairs.phases and studies.pairs.adaptive.min_overlap_samples exclude each other: "
                "a phased window's schedule is fixed before it opens"
            )

    @staticmethod
    def _check_bonnie(sizes: dict, memory: str) -> None:
        """The papers' rule for buffered I/O: Bonnie++'s data set is at least twice the
        container's memory, so the page cache cannot hold it (bonnie++ itself refuses less than
        twice its -r). With direct_io the block tests bypass the page cache: any size will do."""
        if sizes["file_size_mb"] < 2 * sizes["ram_mb"]:
            raise StudyConfigError(
                f"key studies.pairs.sizes.B.file_size_mb has the value {sizes['file_size_mb']}, but "
                f"bonnie++ refuses a data set under twice sizes.B.ram_mb ({sizes['ram_mb']}); "
                f"use at least {2 * sizes['ram_mb']}"
            )
        if not sizes.get("direct_io") and sizes["ram_mb"] < memory_mib(memory):
            raise StudyConfigError(
                f"key studies.pairs.sizes.B.ram_mb has the value {sizes['ram_mb']}, below limits.memory "
                f"({memory} = {memory_mib(memory):g} MiB): the papers' rule is a Bonnie++ data set of at "
                f"least twice the container's memory; use sizes.B.ram_mb >= {memory_mib(memory):g} "
                "(or sizes.B.direct_io: true, which bypasses the page cache)"
            )

    def needs(self, cfg: dict) -> set[str]:
        ms = [microservices()[m] for m in cfg["microservices"]]
        out = set()
        if any(m.server for m in ms):
            out.add("networks")
        if any(m.scratch for m in ms):
            out.add("volumes")
        if {"1", "3b"} & set(cfg["cases"]):
            out |= {"limit:memory", "limit:cpuset" if cfg["limits"]["cpu_mode"] == "cpuset" else "limit:cpus"}
        return out

    def runs(self, cfg: dict) -> list[RunKey]:
        keys = [
            RunKey(self.key_of(PairKey(r["case"], tuple(cases.members_of(r["pair"])))), r["repetition"])
            for r in cases.runs({**cfg, "runtimes": ["-"]})
        ]
        if cfg.get("drift_check") and "1" in cfg["cases"]:
            keys += [RunKey(self.key_of(PairKey("1", (m,), at_end=True)), 1) for m in cfg["microservices"]]
        return keys

    def key_of(self, run: PairKey) -> str:
        """A run's key, the path segment of its results (e.g. case3b/L+S)."""
        return self.run_key.key(**run.key_fields())

    def run_of(self, key: str) -> PairKey:
        """The run of a key as the workflow names it (a wildcard): the one place a key is read."""
        return PairKey.from_key_fields(self.run_key.read(key))

    def after_all(self, key: str) -> bool:
        return self.run_of(key).at_end

    def images(self, cfg: dict) -> list[str]:
        return cases.images_needed(cfg)

    def run_images(self, cfg: dict, key: str) -> list[str]:
        run = self.run_of(key)
        members = list(run.members)
        # Network servers run from their microservice's image.
        names = cases.image_for(run.case, members) + [m for m in members if microservices()[m].server]
        return sorted(set(names))

    def settings(self, cfg: dict, key: str) -> dict:
        run = self.run_of(key)
        case = run.case  # the baseline re-measured at the end runs as Case 1
        out = {
            **run.settings(),
            "iteration_timeout_s": cfg["iteration_timeout_s"],
            "limits": copy.deepcopy(cfg["limits"]),
            "sizes": {m: self._sizes(cfg, m) for m in run.members},
            **({"hold": True} if cfg.get("hold") else {}),  # absent otherwise: settings unchanged
        }
        # Only where the rule moves a server (a member with cores of its own): other runs keep
        # their settings, so they are not run again.
        pinned = cases.REGISTRY[case].limited and cfg["limits"]["cpu_mode"] == "cpuset"
        if pinned and any(microservices()[m].server for m in run.members):
            out["server_cpus"] = cfg["network_server_cpus"]
        # The stopping rules, only where configured: runs with fixed counts keep their settings.
        adaptive = cfg.get("adaptive", {})
        if case in cases.ALONE_CASES:
            out["iterations"] = cfg["iterations"]
            if "target_ci" in adaptive:
                out["adaptive"] = {k: adaptive[k] for k in ("target_ci", "max_iterations")}
        else:
            out["window_s"] = cfg["window_s"][case]
            if "min_overlap_samples" in adaptive:
                out["adaptive"] = {k: adaptive[k] for k in ("min_overlap_samples", "window_cap_s")}
            if "phases" in cfg:  # the window its blocks of phases fill, in place of window_s
                out["phases"] = phases.settings(cfg["phases"], out["sizes"])
                out["window_s"] = phases.window_s(out["phases"], len(run.members))
        return out

    @staticmethod
    def _sizes(cfg: dict, ms: str) -> dict:
        """A member's sizes; with threads: case1, a thread count left at 0 (one per CPU) becomes
        Case 1's, limits.cpus."""
        sizes = dict(cfg["sizes"][ms])
        if cfg.get("threads") == "case1" and sizes.get("threads") == 0:
            sizes["threads"] = cfg["limits"]["cpus"]
        return sizes

    def inert_keys(self, cfg: dict) -> set[str]:
        """Where a network server runs changes nothing without a network microservice."""
        known = microservices()
        if any(m in known and known[m].server for m in cfg.get("microservices", [])):
            return set()
        return {"network_server_cpus"}

    def finding_needs(self, check: str, args: dict) -> dict | str:
        return check_registry.CHECKS[check].needs(args)

    def expected_seconds(self, settings: dict) -> float | None:
        return duration.run_seconds(settings)
