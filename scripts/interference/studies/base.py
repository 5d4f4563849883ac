"""What a study kind declares. One module (or package) under studies/ per kind; the registry
(studies/__init__.py) finds it by its `name`, and the workflow, the generic runner
(interference.runner), the parser step (interference.parse), the statistics step
(interference.statistics) and the report ask it for everything that is particular to it."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pandas as pd

from interference.host_package import HostPackage

if TYPE_CHECKING:
    from interference.run_context import RunContext


class StudyConfigError(ValueError):
    """A study's config part is invalid; the message names the key and the value."""


@dataclass(frozen=True)
class Table:
    """One statistics output, results/stats/<study>/<name>.tsv.

    compute(inputs, jobs) gets a dict of paths: "samples" (the study's tidy samples) and each
    other table named in `needs`, which it reads itself; `files` are further inputs (e.g.
    published data) whose change reruns it."""

    compute: Callable[[dict[str, Path], int], pd.DataFrame]
    needs: tuple[str, ...] = ("samples",)
    files: tuple[Path, ...] = ()
    # Processes it can use (its results do not depend on the count).
    threads: int = 1


@dataclass(frozen=True)
class RunKey:
    """One run of a study: its key (a relative path, e.g. case3b/L+S) and repetition."""

    key: str
    repetition: int


class Study(abc.ABC):
    # The config key under `studies:` and the path segment of its results.
    name: ClassVar[str]
    title: ClassVar[str]
    # JSON schema of the study's config part (with defaults); `runtimes` is added by the registry.
    schema: ClassVar[dict]
    # Regex of a run key; the workflow's wildcard constraint is the union over all studies.
    key_pattern: ClassVar[str]
    # Statistics outputs by name.
    tables: ClassVar[dict[str, Table]] = {}
    # The report section (a .qmd fragment); None: the generic section (summary table).
    report_section: ClassVar[Path | None] = None
    # Its checks of the papers' findings by name (report/published/findings.yaml names them):
    # check(ctx, args) -> findings.verdict.Measure or Skip; see findings/scorecard.py.
    findings: ClassVar[dict[str, Callable]] = {}

    def config_schema(self) -> dict:
        """The schema of studies.<name>; a study whose schema depends on declarations overrides it."""
        return self.schema

    def check(self, cfg: dict) -> None:
        """Checks beyond the schema (raise StudyConfigError)."""

    def host_packages(self, cfg: dict) -> tuple[HostPackage, ...]:
        """Packages the study needs on the host with this config (its own tools there), beyond
        its runtimes'."""
        return ()

    def check_machine(self, cfg: dict) -> None:
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

    def images(self, cfg: dict) -> list[str]:
        """Image names the study needs (base, a microservice id, or a stack like L+S)."""
        return ["base"]

    def run_images(self, cfg: dict, key: str) -> list[str]:
        """The images one run uses."""
        return ["base"]

    @abc.abstractmethod
    def settings(self, cfg: dict, key: str) -> dict:
        """The run's slice of the config: a change reruns exactly the runs it touches."""

    @abc.abstractmethod
    def execute(self, run: RunContext) -> dict:
        """Do one run on run.runtime, writing raw files into run.outdir; return meta.json fields."""

    @abc.abstractmethod
    def parse(self, meta: dict, raw_dir: Path) -> pd.DataFrame:
        """One run's raw files -> tidy rows (a status column says what went wrong, never a crash)."""

    def expected_seconds(self, settings: dict) -> float | None:
        """The study's model of a run's wall time (the time estimate where this host has not
        measured the same run before); None: no model, the estimate says so."""
        return None

    def code(self, step: str) -> list[Path] | None:
        """The source files of one step ("parse", "statistics", "runs" (run_row), "report",
        "findings") whose change reruns it;
        None: the study's whole module or package."""
        return None

    def run_row(self, meta: dict) -> dict:
        """The study's columns of runs.tsv for one run (besides the generic ones)."""
        return {}
