"""The sample every study's parser writes, and the one way an iteration's output becomes samples.

A study's samples.tsv has its identity columns (host, runtime, its factors, repetition,
iteration, ...) followed by a Sample's fields: which metric, its value (None when it was not
measured), unit and direction, and a status ("ok", or what went wrong). A failed or unreadable
iteration is a row with its status, never an exception: nothing measured is lost to a parser."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from interference import parsers
from interference.core.microservices import Metric

OK = "ok"
MISSING_OUTPUT = "missing output"


@dataclass(frozen=True)
class Sample:
    metric: str
    value: float | None
    unit: str
    higher_is_better: bool
    status: str

    def row(self, **identity) -> dict:
        """The samples.tsv row: the study's identity columns, then the sample's."""
        return {**identity, **asdict(self)}


def read_output(parse: Callable[[str, str], dict], stdout: Path, stderr: Path | None) -> tuple[dict, str]:
    """(values, status) of one iteration's output files read by a microservice's parser."""
    try:
        out = stdout.read_text(errors="replace")
        err = stderr.read_text(errors="replace") if stderr is not None else ""
        return parse(out, err), OK
    except parsers.ParseError as e:
        return {}, str(e)
    except OSError:
        return {}, MISSING_OUTPUT


def metric_samples(values: dict, status: str, metrics: tuple[Metric, ...]) -> list[Sample]:
    """One sample per declared metric of an iteration whose output gave `values` with `status`:
    a metric its parser could not read (a ParseError in its place) or did not find has a status
    of its own, the iteration's others keep theirs."""
    out = []
    for m in metrics:
        value, own = values.get(m.name), status
        if isinstance(value, parsers.ParseError):
            value, own = None, str(value)
        elif status == OK and value is None:
            own = f"no {m.name} in output"
        out.append(Sample(m.name, value if own == OK else None, m.unit, m.higher_is_better, own))
    return out


def parse_iteration(
    iteration: dict,
    raw_dir: Path,
    parse: Callable[[str, str], dict],
    metrics: tuple[Metric, ...],
    stderr: bool = True,
) -> list[Sample]:
    """The samples of one iteration as the loop recorded it (its status, stdout and stderr
    files): its output is read only when the iteration itself ended well."""
    status = iteration["status"]
    out = iteration["stdout"] if status == OK else ""  # a failed iteration's files are not read
    err = iteration.get("stderr") if stderr else None
    return output_samples(status, out, err, raw_dir, parse, metrics)


def output_samples(
    status: str,
    stdout: str,
    stderr: str | None,
    raw_dir: Path,
    parse: Callable[[str, str], dict],
    metrics: tuple[Metric, ...],
) -> list[Sample]:
    """The samples of one iteration from its status and output files (relative to raw_dir; no
    stderr: its parser reads stdout only), for a study whose iterations are typed records."""
    values = {}
    if status == OK:
        err = raw_dir / stderr if stderr else None
        values, status = read_output(parse, raw_dir / stdout, err)
    return metric_samples(values, status, metrics)
