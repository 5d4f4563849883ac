"""What a study kind declares. One folder under studies/ per kind; the registry
(studies/__init__.py) finds it by its `name`, and the workflow, the generic runner
(interference.steps.runner), the parser step (interference.steps.parse), the statistics step
(interference.steps.statistics) and the report ask it for everything that is particular to it.

A study's folder has the same rooms in every kind:
  __init__.py   the Study subclass: config schema, runs, settings, images, tables (planning)
  execute.py    execute(run) -> meta.json fields       (the run step, interference.steps.runner)
  parse.py      parse(meta, raw_dir) -> samples          (the parse step)
  <module>.py   the functions its tables name            (the statistics step)
  findings.py   CHECKS: its checks of the papers' findings (the findings step)
  runs.py       run_row(meta): its columns of runs.tsv   (optional; member_rows(meta): its
                rows of run_members.tsv, with member_schema)
  section.qmd   its report section (+ section.py or section/)
Planning (the workflow's DAG) imports only __init__.py; each step imports its own module when
it runs, so that a dry run does not load the statistics stack."""

from __future__ import annotations

import abc
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from interference.core.table_schema import TableSchema
from interference.host.packages import HostPackage

if TYPE_CHECKING:
    import pandas as pd

    from interference.core.run_context import RunContext


class StudyConfigError(ValueError):
    """A study's config part is invalid; the message names the key and the value."""


@dataclass(frozen=True)
class Table:
    """One statistics output, results/stats/<study>/<name>.tsv.

    `compute` names the function, "module:function" in the study's folder (imported only by the
    statistics step). It gets (inputs, jobs): a dict of paths, "samples" (the study's tidy
    samples) and each other table named in `needs` (the study's own, or one the
    workflow's own rules write beside them: WORKFLOW_TABLES), which it reads itself; `files` are further
    inputs (e.g. published data) whose change reruns it. It returns a DataFrame, which the
    statistics step checks against `schema` (its columns, in order, and their kinds) before
    writing it."""

    compute: str
    needs: tuple[str, ...] = ("samples",)
    files: tuple[Path, ...] = ()
    # Processes it can use (its results do not depend on the count).
    threads: int = 1
    # The table's columns (core/table_schema.py); None: not declared (not checked).
    schema: TableSchema | None = None


class KeyFormat:
    """A study's run key as a path made from named fields: a template such as "case{case}/{pair}"
    and each field's regex. The key of a run, its fields read back and the workflow's wildcard
    pattern all come from this one declaration (no study splits a key string by hand)."""

    def __init__(self, template: str, **fields: str):
        self.template, self.fields = template, fields
        literal = re.split(r"\{(\w+)\}", template)  # text, field, text, field, ..., text
        self.pattern = "".join(
            re.escape(part) if i % 2 == 0 else f"(?:{fields[part]})" for i, part in enumerate(literal)
        )
        self._named = re.compile(
            "".join(
                re.escape(part) if i % 2 == 0 else f"(?P<{part}>{fields[part]})"
                for i, part in enumerate(literal)
            )
        )

    def key(self, **values) -> str:
        key = self.template.format(**values)
        if not self._named.fullmatch(key):
            raise ValueError(f"run key {key!r} does not match {self.template!r} ({self.pattern})")
        return key

    def read(self, key: str) -> dict[str, str]:
        """The fields of a key (strings, as in the path)."""
        m = self._named.fullmatch(key)
        if not m:
            raise ValueError(f"run key {key!r} does not match {self.template!r}")
        return m.groupdict()


@dataclass(frozen=True)
class Compared:
    """A ratio a study reports with its CI (an IR, a runtime or network ratio), compared with
    saved sessions as a difference (changes.py): the table, the cell's key columns, the value
    and its CI's columns."""

    table: str
    key: tuple[str, ...]
    value: str
    low: str = "ci_low"
    high: str = "ci_high"


@dataclass(frozen=True)
class RunKey:
    """One run of a study: its key (a relative path, e.g. case3b/L+S) and repetition."""

    key: str
    repetition: int


# What the workflow's own rules write beside a study's tables in results/stats/<study>/ (run_tables, environment, order_agreement:
# runs, run_members; changes.smk: changes, history, session_variance, regression): no study
# table takes
# these names, or two rules would write one file.
GENERIC_TABLES = frozenset({"runs", "run_members", "changes", "history", "session_variance", "regression"})
# Those a study's table may need (Table.needs): written before its statistics, from the runs alone.
WORKFLOW_TABLES = frozenset({"runs", "run_members"})


class Study(abc.ABC):
    # The config key under `studies:` and the path segment of its results.
    name: ClassVar[str]
    title: ClassVar[str]
    # JSON schema of the study's config part (with defaults); `runtimes` is added by the registry.
    schema: ClassVar[dict]
    # Its run keys (KeyFormat); the workflow's wildcard constraint is the union of their patterns.
    run_key: ClassVar[KeyFormat]
    # Statistics outputs by name.
    tables: ClassVar[dict[str, Table]] = {}
    # The report section (a .qmd fragment); None: the generic section (summary table).
    report_section: ClassVar[Path | None] = None
    # Its ratios compared with saved sessions beside its summary's means (Compared).
    compared: ClassVar[tuple[Compared, ...]] = ()
    # The columns of run_members.tsv, one row per member of a run (core's RUN_MEMBER, then the
    # study's facts about each); None: its runs have no members, the table has no rows.
    member_schema: ClassVar[TableSchema | None] = None

    @property
    def key_pattern(self) -> str:
        return self.run_key.pattern

    def config_schema(self) -> dict:
        """The schema of studies.<name>; a study whose schema depends on declarations overrides it."""
        return self.schema

    def check(self, cfg: dict) -> None:  # noqa: B027 (a hook: most studies' schema says it all)
        """Checks beyond the schema (raise StudyConfigError)."""

    def host_packages(self, cfg: dict) -> tuple[HostPackage, ...]:
        """Packages the study needs on the host with this config (its own tools there), beyond
        its runtimes'."""
        return ()

    def check_machine(self, cfg: dict) -> None:  # noqa: B027 (a hook: most need only packages)
        """Checks of this machine beyond its packages (a kernel feature, a device); raise
        StudyConfigError. Skipped when only the packages a config needs are asked for."""

    def needs(self, cfg: dict) -> set[str]:
        """Runtime capabilities the study needs with this config (names as in Capabilities.lacks)."""
        return set()

    @abc.abstractmethod
    def runs(self, cfg: dict) -> list[RunKey]:
        """Every run of the config (each runtime runs all of them, unless runs_on says otherwise)."""

    def runs_on(self, cfg: dict, runtime: str) -> list[RunKey]:
        """The runs of one runtime (e.g. a variant only one runtime has); all by default."""
        return self.runs(cfg)

    def after_all(self, key: str) -> bool:
        """True for a run measured after every other run of its study on its runtime (e.g. a
        baseline re-measured at the end for a drift check): the workflow makes it wait for them."""
        return False

    def network_mode(self, settings: dict) -> str | None:
        """The network mode a run's shared part is opened with (runtime.open_run; nested: the
        parent's); None: the runtime's default."""
        return None

    def other_nodes(self, settings: dict) -> list[str]:
        """Hosts besides its own that a run uses (e.g. a server on another node, started there
        through Slurm): checked as nodes before any job, and a run that has any needs Slurm."""
        return []

    def images(self, cfg: dict) -> list[str]:
        """Image names the study needs (base, a microservice id, or a stack like L+S)."""
        return ["base"]

    def run_images(self, cfg: dict, key: str) -> list[str]:
        """The images one run uses."""
        return ["base"]

    @abc.abstractmethod
    def settings(self, cfg: dict, key: str) -> dict:
        """The run's slice of the config: a change reruns exactly the runs it touches."""

    def inert_keys(self, cfg: dict) -> set[str]:
        """Keys of the study's config part that change none of this config's runs: a saved
        session whose definition differs from today's only in them is the same definition."""
        return set()

    def finding_needs(self, check: str, args: dict) -> dict | str | None:
        """What one finding's check (with its catalogue args) needs in this study's config part
        (steps/plan.py merges it), a sentence saying why it cannot be planned in one config
        with the others, or None: the study's part of the shipped config the finding names."""
        return None

    def fixed_seconds(self, settings: dict) -> float:
        """The part of expected_seconds that is wall-clock time on any host (a test's fixed
        duration), which the estimate does not scale to a host's speed."""
        return 0.0

    def expected_seconds(self, settings: dict) -> float | None:
        """The study's model of a run's wall time (the time estimate where this host has not
        measured the same run before); None: no model, the estimate says so."""
        return None

    # Its rooms (see the module docstring): each step imports its own module when it runs.
    @property
    def folder(self) -> Path:
        return Path(inspect.getfile(type(self))).parent

    def step(self, module: str) -> ModuleType:
        """The study's module `module` (execute, parse, findings, ...), imported now."""
        return importlib.import_module(f"{type(self).__module__}.{module}")

    def execute(self, run: RunContext) -> dict:
        """Do one run on run.runtime, writing raw files into run.outdir; return meta.json fields."""
        return self.step("execute").execute(run)

    def parse(self, meta: dict, raw_dir: Path) -> pd.DataFrame:
        """One run's raw files -> tidy rows (a status column says what went wrong, never a crash)."""
        return self.step("parse").parse(meta, raw_dir)

    def compute_table(self, name: str, inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
        module, function = self.tables[name].compute.split(":")
        return getattr(self.step(module), function)(inputs, jobs)

    def checks(self) -> dict[str, Callable]:
        """Its checks of the papers' findings by name (report/published/findings.yaml names
        them): check(ctx, args) -> findings.verdict.Measure or Skip; see steps/scorecard.py."""
        return self.step("findings").CHECKS if self.room("findings") else {}

    def run_row(self, meta: dict) -> dict:
        """The study's columns of runs.tsv for one run (besides the generic ones)."""
        return self.step("runs").run_row(meta) if self.room("runs") else {}

    def member_rows(self, meta: dict) -> list[dict]:
        """One dict per member of a run: member, role, microservice and the study's facts, the
        columns of member_schema after the run's identity (which the run-facts step adds)."""
        return self.step("runs").member_rows(meta) if self.member_schema is not None else []

    def code(self, step: str) -> list[Path]:
        """The entry files of one step ("parse", "statistics", "runs", "findings", "report"): with
        every module they import (studies.code_files) they are the step's code inputs, whose
        change reruns its jobs."""
        here = self.folder
        if step == "statistics":
            return sorted({self.room(t.compute.split(":")[0]) for t in self.tables.values()})
        if step == "report":
            section = [here / "section.py"] if (here / "section.py").is_file() else []
            section += sorted((here / "section").rglob("*.py"))
            return ([self.report_section] if self.report_section else []) + section
        return [self.room(step) or here / "__init__.py"]

    def room(self, module: str) -> Path | None:
        """The file of one of its modules ("statistics.tables"): a module, or a folder of them
        (its __init__.py, which imports the rest); None if the study has no such room."""
        base = self.folder.joinpath(*module.split("."))
        return next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()), None)
