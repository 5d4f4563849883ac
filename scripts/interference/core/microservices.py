"""The microservice registry: one containers/<folder>/microservice.yaml per microservice."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from interference import REPO_ROOT

CONTAINERS_DIR = REPO_ROOT / "containers"


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool


@dataclass(frozen=True)
class Microservice:
    id: str
    name: str
    folder: Path
    resource: str
    tool: str
    paper_tool: str
    parser: str
    # Workload parameters: a JSON schema per key plus `env`, the variable it becomes.
    parameters: dict[str, dict]
    metrics: tuple[Metric, ...]
    # A network benchmark's server runs in its own container outside the measured pair.
    server: dict | None = None
    # Where a scratch volume is mounted (disk benchmarks), removed after the run.
    scratch: str | None = None
    stand_in_reason: str | None = None
    extra: dict = field(default_factory=dict)

    def iteration_seconds(self, sizes: dict) -> float | None:
        """Expected seconds of one iteration at these sizes (defaults for those not given), from
        containers/iteration-times.yaml; None where it declares none."""
        expression = iteration_times().get(self.id)
        if expression is None:
            return None
        given = {key: sizes.get(key, spec.get("default")) for key, spec in self.parameters.items()}
        # A trusted expression from the repository's own file: arithmetic on the parameters only.
        return float(eval(expression, {"__builtins__": {}}, given))

    def container_env(self, sizes: dict) -> dict[str, str]:
        """Environment variables that carry this microservice's workload size (a size not
        given, as in settings written by hand, is its declared default)."""

        def text(v) -> str:
            return ("true" if v else "false") if isinstance(v, bool) else str(v)  # shell-style

        given = {key: sizes.get(key, spec.get("default")) for key, spec in self.parameters.items()}
        return {
            spec["env"]: text(v) for key, spec in self.parameters.items() if (v := given[key]) is not None
        }


def _load(path: Path) -> Microservice:
    d = yaml.safe_load(path.read_text())
    known = {
        "id",
        "name",
        "resource",
        "tool",
        "paper_tool",
        "parser",
        "parameters",
        "metrics",
        "server",
        "scratch",
        "stand_in_reason",
    }
    return Microservice(
        id=d["id"],
        name=d["name"],
        folder=path.parent,
        resource=d["resource"],
        tool=d["tool"],
        paper_tool=d["paper_tool"],
        parser=d["parser"],
        parameters=d.get("parameters", {}),
        metrics=tuple(Metric(**m) for m in d["metrics"]),
        server=d.get("server"),
        scratch=d.get("scratch"),
        stand_in_reason=d.get("stand_in_reason"),
        extra={k: v for k, v in d.items() if k not in known},
    )


@functools.cache
def iteration_times(path: Path = CONTAINERS_DIR / "iteration-times.yaml") -> dict[str, str]:
    return yaml.safe_load(path.read_text()) if path.exists() else {}


@functools.cache
def registry(containers_dir: Path = CONTAINERS_DIR) -> dict[str, Microservice]:
    """All declared microservices by id (read once per process: the workflow asks once per job)."""
    found = {}
    for path in sorted(containers_dir.glob("*/microservice.yaml")):
        ms = _load(path)
        if ms.id in found:
            raise ValueError(f"microservice id {ms.id} declared twice: {path} and {found[ms.id].folder}")
        found[ms.id] = ms
    return found


def sizes_properties(set_per_run: dict[str, tuple] | None = None) -> dict:
    """The config schema's `sizes` properties of a study: for each microservice an object of its
    declared parameters (without the environment names they reach it by), less those the study
    sets per run (`set_per_run`: id -> parameter names)."""
    drop = set_per_run or {}
    return {
        ms.id: {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                k: {kk: vv for kk, vv in v.items() if kk != "env"}
                for k, v in ms.parameters.items()
                if k not in drop.get(ms.id, ())
            },
        }
        for ms in registry().values()
    }


def unknown_in(names: list[str], key: str, excluded=()) -> str | None:
    """What is wrong with the first name of `names` (the config's list at `key`) that is no
    declared microservice; None if all are known."""
    known = sorted(set(registry()) - set(excluded))
    for i, name in enumerate(names):
        if name not in registry():
            return (
                f"key {key}[{i}] has the unknown microservice {name!r}; known: {', '.join(known)} "
                "(each is a containers/<folder>/microservice.yaml)"
            )
    return None
