"""The run record: what the generic runner (steps/runner.py) writes into every run's meta.json,
and the one way it is written and read back (the parse step, run facts).

A record has a schema version; a file without one is version 0 (written before the field
existed: the same shape). The generic fields are typed here; the study's own fields (what its
execute() returned) are kept as they were written, in `study_fields`, for the study to type
(e.g. studies/pairs/records.py). Fields the runner added over time (runtime_run, reaped_before,
telemetry) default when absent, so that older files still load. A field of the wrong kind stops
the load with a RecordError naming the file and the field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
# Every version this code reads: 0 is version 1 without the field.
READABLE = (0, 1)


class RecordError(ValueError):
    """A record that is not what its schema says; the message names the file and the field."""


_MISSING = object()
NUMBER = (int, float)


def field_of(d: dict, where: str, name: str, kind, default=_MISSING, label: str | None = None):
    """d[name] if it is of `kind` (a type or tuple of types), `default` when absent (required when
    none is given), else a RecordError naming the field (`label`: its full name, e.g.
    settings.key). bool is no number here (JSON true is not 1)."""
    if name not in d and default is not _MISSING:
        return default
    value, kinds = d.get(name, _MISSING), kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return value
    what = "is missing" if value is _MISSING else f"is {value!r}"
    expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
    raise RecordError(f"{where}: field {label or name!r} {what}; expected {expected}")


@dataclass(frozen=True)
class RunIdentity:
    """Which run it is, from the settings every study's run has (studies.run_settings)."""

    host: str
    runtime: str
    key: str
    repetition: int

    @classmethod
    def from_settings(cls, s: dict, where: str) -> RunIdentity:
        def get(name, kind):
            return field_of(s, where, name, kind, label=f"settings.{name}")

        return cls(get("host", str), get("runtime", str), get("key", str), get("repetition", int))


# The generic fields, in the order the runner writes them; a study's own fields come after
# runtime_run (the runner merged them there before the record had a type).
GENERIC = (
    "schema_version",
    "study",
    "settings",
    "run_id",
    "host_info",
    "runtime_info",
    "started",
    "runtime_run",
    "telemetry",
    "leftovers_removed",
    "reaped_before",
    "finished",
    "containers",
    "events",
)


@dataclass(frozen=True)
class RunRecord:
    study: str
    # The run's slice of the config as the workflow passed it (a per-study type: not yet).
    settings: dict
    run_id: str = ""
    host_info: dict = field(default_factory=dict)
    runtime_info: dict = field(default_factory=dict)
    started: float | None = None
    finished: float | None = None
    # What runtime.open_run made for the whole run (None: nothing).
    runtime_run: Any = None
    # The contention sampler's summary; None: telemetry was off (the field is then absent).
    telemetry: dict | None = None
    leftovers_removed: list = field(default_factory=list)
    reaped_before: list = field(default_factory=list)
    containers: list = field(default_factory=list)
    events: list = field(default_factory=list)
    # What the study's execute() returned, as written (its own type reads it).
    study_fields: dict = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self):
        clash = sorted(set(self.study_fields) & set(GENERIC))
        if clash:  # the runner used to merge them into one dict: one would have hidden the other
            raise RecordError(f"study {self.study!r} returned fields the runner writes itself: {clash}")

    @property
    def identity(self) -> RunIdentity:
        return RunIdentity.from_settings(self.settings, f"run {self.run_id or '?'}")

    # Every study's execute() counts its iterations and failures (runs.tsv, the runner's line).
    @property
    def n_iterations(self) -> int | None:
        return self.study_fields.get("n_iterations")

    @property
    def n_failed(self) -> int | None:
        return self.study_fields.get("n_failed")

    def to_json(self) -> dict:
        """The one serializer: meta.json's fields in the order the runner always wrote them."""
        out = {
            "schema_version": self.schema_version,
            "study": self.study,
            "settings": self.settings,
            "run_id": self.run_id,
            "host_info": self.host_info,
            "runtime_info": self.runtime_info,
            "started": self.started,
            "runtime_run": self.runtime_run,
            **self.study_fields,
        }
        if self.telemetry is not None:
            out["telemetry"] = self.telemetry
        return out | {
            "leftovers_removed": self.leftovers_removed,
            "reaped_before": self.reaped_before,
            "finished": self.finished,
            "containers": self.containers,
            "events": self.events,
        }

    @classmethod
    def from_json(cls, d, where: str = "meta.json") -> RunRecord:
        """The record of a meta.json's contents, any readable version."""
        if not isinstance(d, dict):
            raise RecordError(f"{where}: a run record is a JSON object, not {type(d).__name__}")
        version = field_of(d, where, "schema_version", int, default=0)
        if version not in READABLE:
            raise RecordError(
                f"{where}: field 'schema_version' is {version}; this code reads versions {READABLE}"
            )
        settings = field_of(d, where, "settings", dict)
        RunIdentity.from_settings(settings, where)  # checked now, not where a column is made
        return cls(
            study=field_of(d, where, "study", str),
            settings=settings,
            run_id=field_of(d, where, "run_id", str, default=""),
            host_info=field_of(d, where, "host_info", dict, default={}),
            runtime_info=field_of(d, where, "runtime_info", dict, default={}),
            started=field_of(d, where, "started", (*NUMBER, type(None)), default=None),
            finished=field_of(d, where, "finished", (*NUMBER, type(None)), default=None),
            runtime_run=d.get("runtime_run"),
            telemetry=field_of(d, where, "telemetry", (dict, type(None)), default=None),
            leftovers_removed=field_of(d, where, "leftovers_removed", list, default=[]),
            reaped_before=field_of(d, where, "reaped_before", list, default=[]),
            containers=field_of(d, where, "containers", list, default=[]),
            events=field_of(d, where, "events", list, default=[]),
            study_fields={k: v for k, v in d.items() if k not in GENERIC},
            schema_version=version,  # as read: 0 and 1 have the same shape
        )


def load(path: Path) -> RunRecord:
    """A run's meta.json: a RecordError names the file and the field when it is not a record."""
    try:
        d = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not JSON ({e})") from e
    return RunRecord.from_json(d, str(path))


def write(record: RunRecord, path: Path) -> None:
    """Write meta.json atomically: it appears only complete (an interrupted run leaves none)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record.to_json(), indent=1) + "\n")
    tmp.rename(path)
