"""The study registry: every folder here whose __init__.py defines a Study subclass with a
`name`. A new study kind is one folder here (its rooms: studies/base.py); nothing else changes."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from pathlib import Path

from interference.core import code_deps
from interference.studies.base import GENERIC_TABLES, KeyFormat, RunKey, Study, StudyConfigError, Table

HERE = Path(__file__).resolve().parent


@functools.cache
def registry() -> dict[str, Study]:
    found: dict[str, Study] = {}
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, Study) and not inspect.isabstract(obj):
                if obj.__module__ != module.__name__ and not obj.__module__.startswith(module.__name__ + "."):
                    continue  # imported from elsewhere, not defined here
                check_study(obj, found, module.__name__)
                found[obj.name] = obj()
    return found


def check_study(cls: type[Study], found: dict, module: str) -> None:
    """A study class the registry can take: a name of its own, no table named like the workflow's."""
    if cls.name in found:
        raise ValueError(f"study {cls.name!r} is defined twice ({module})")
    if clash := sorted(GENERIC_TABLES & set(cls.tables)):
        raise ValueError(
            f"study {cls.name!r} ({module}) declares the tables {clash}, which the workflow writes itself "
            f"beside every study's; rename them (reserved: {', '.join(sorted(GENERIC_TABLES))})"
        )


def get(name: str) -> Study:
    return registry()[name]


# Where a run's record lies, relative to the working folder (the workflow's run rule writes it).
RUN_META = "results/raw/{host}/{runtime}/{study}/{key}/rep{rep}/meta.json"


def run_settings(cfg: dict, study: str, runtime: str, key: str, rep: int) -> dict:
    """A run's slice of the validated config, without its host: what the run rule passes to the
    runner (changing it reruns exactly that run) and what an import checks another host's runs
    against."""
    return {
        "runtime": runtime,
        "runtime_options": cfg["runtime_options"].get(runtime, {}),
        "study": study,
        "key": key,
        "repetition": rep,
        "telemetry_interval_s": cfg["telemetry_interval_s"],
        **get(study).settings(cfg["studies"][study], key),
    }


def code_files(name: str, step: str) -> list[Path]:
    """The source files of one study's step: its entry files (Study.code) and every module of the
    package they import (code_deps.closure), so that a change to any of them reruns that step's
    jobs and a change to any other does not."""
    return code_deps.closure(get(name).code(step))


__all__ = [
    "KeyFormat",
    "RunKey",
    "Study",
    "StudyConfigError",
    "Table",
    "check_study",
    "code_files",
    "get",
    "registry",
    "run_settings",
]
