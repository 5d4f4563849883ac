"""How long an invocation will take, said before the first run and after each one.

A run's expected duration is what this host measured before for the same settings (any
repetition; the median when there are several): the runs' meta.json under results/raw/<host>/
and the ledger results/durations/<host>.tsv, which the runner extends after every run and which
survives deleting the raw results. Without such history it is the study's model of a run
(Study.expected_seconds: iterations x expected iteration time, windows, start costs), scaled to
this host (model_scale: by how its earlier runs of any settings compared with their models, or
on a host with none by a short probe of its speed, host/probe.py), and without a model there is
no estimate ("no estimate for <study>"), never a made-up number.
The steps after the runs (parsing, statistics, the report) and image builds are modelled by the
constants below, measured on the 2-core machine this was developed on.

The workflow prints the plan before the first job (also in a dry run, -n), and onstart starts
`Progress`, a thread of the snakemake process that watches the plan's meta.json files and prints
a line per finished run with the time left, scaled by how the runs so far compared with their
estimates."""

from __future__ import annotations

import csv
import fcntl
import json
import math
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LEDGER_COLUMNS = ("settings", "study", "runtime", "key", "repetition", "seconds", "finished")
PARSE_PER_RUN_S = 1.3  # one parse job between two runs (a python start, raw files, telemetry)
AFTER_RUNS_S = 25.0  # after the last run: merging, statistics, run table, environment, report ...
AFTER_PER_RUN_S = 1.2  # ... which grow with the runs (measured: 38 runs 48 s, 60 runs 96 s)
IMAGE_S = 3.0  # an image json made: 0.5 s when the engine has the image, about 5 s to build it
BASE_IMAGE_S = 15.0  # the base image: debootstrap (about 28 s) when no registry serves it
NO_MODEL_S = 60.0  # a run of a study without a model, where a plan must count something


@dataclass(frozen=True)
class PlannedRun:
    study: str
    runtime: str
    key: str
    repetition: int
    meta: str  # its meta.json path
    settings: dict  # what the run rule passes to the runner (host included)
    seconds: float | None = None
    source: str = ""  # "history", "model" or "" (no estimate)


def settings_id(settings: dict) -> str:
    """What makes two runs the same run for the estimate: their settings but the repetition."""
    return json.dumps({k: v for k, v in settings.items() if k != "repetition"}, sort_keys=True)


def ledger_path(results: Path, host: str) -> Path:
    return results / "durations" / f"{host}.tsv"


def record(meta: dict, results: Path = Path("results")) -> None:
    """Add a finished run to its host's ledger (the runner calls it after meta.json)."""
    s = meta["settings"]
    path = ledger_path(results, s["host"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", newline="") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # runners ending at once: one header, whole lines
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        if os.fstat(f.fileno()).st_size == 0:
            w.writerow(LEDGER_COLUMNS)
        w.writerow(
            [settings_id(s), s["study"], s["runtime"], s["key"], s["repetition"]]
            + [f"{meta['finished'] - meta['started']:.2f}", f"{meta['finished']:.0f}"]
        )


def history(results: Path, host: str) -> dict[str, list[float]]:
    """Seconds each run took on this host before, by settings_id."""
    seen: dict[tuple[str, float], float] = {}  # (settings, finished) -> seconds: each run once
    for meta_path in (results / "raw" / host).rglob("meta.json"):
        try:
            meta = json.loads(meta_path.read_text())
            sid, finished = settings_id(meta["settings"]), round(meta["finished"])
            seen[(sid, finished)] = meta["finished"] - meta["started"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a run written by an older version or damaged: no history from it
    ledger = ledger_path(results, host)
    if ledger.exists():
        with ledger.open(newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                try:
                    seen.setdefault((row["settings"], round(float(row["finished"]))), float(row["seconds"]))
                except (KeyError, TypeError, ValueError):
                    continue
    out: dict[str, list[float]] = {}
    for (sid, _), seconds in seen.items():
        out.setdefault(sid, []).append(seconds)
    return out


MIN_HISTORY_RUNS = 3  # earlier runs with a model that calibrate it, else the probe


@dataclass(frozen=True)
class Scale:
    """The factor this host's runs take over the models, and what it comes from."""

    factor: float = 1.0
    source: str = "none"  # "history", "probe" or "none"
    detail: str = ""


def model_scale(
    past: dict[str, list[float]],
    model_of: Callable[[dict], float | None],
    probe=None,
    fixed_of: Callable[[dict], float] = lambda s: 0.0,
) -> Scale:
    """Over this host's earlier runs where a model exists, the seconds they took over what the
    models said (a ratio of sums: long runs weigh as they do in a total); with fewer than
    MIN_HISTORY_RUNS of those, probe() / host_probe.REFERENCE_S (probe: a callable giving this
    host's probe seconds, or None for no scaling)."""
    taken = expected_sum = 0.0
    n = 0
    for sid, durations in past.items():
        try:
            settings = json.loads(sid)
            expected, fixed = model_of(settings), fixed_of(settings)
        except (ValueError, KeyError, TypeError):
            continue
        if expected and expected > fixed:  # what scales: the model less its wall-clock part
            taken += sum(d - fixed for d in durations)
            expected_sum += (expected - fixed) * len(durations)
            n += len(durations)
    if n >= MIN_HISTORY_RUNS:
        return Scale(taken / expected_sum, "history", f"{n} earlier runs of this host against their models")
    if probe is None:
        return Scale()
    from interference.host.probe import REFERENCE_S

    seconds = probe()
    return Scale(
        seconds / REFERENCE_S,
        "probe",
        f"a probe of this host: {seconds:.2f} s against the reference's {REFERENCE_S} s",
    )


def study_model(settings: dict) -> float | None:
    """A run's seconds by its study's model (None: no such study, or no model)."""
    from interference import studies

    study = studies.registry().get(settings.get("study"))
    return study.expected_seconds(settings) if study else None


def study_fixed(settings: dict) -> float:
    """The wall-clock part of a run's model (what does not scale with the host)."""
    from interference import studies

    study = studies.registry().get(settings.get("study"))
    return study.fixed_seconds(settings) if study else 0.0


def scale_path(results: Path, host: str) -> Path:
    return results / "durations" / f"{host}.scale.json"


def host_scale(results: Path, host: str, keep: bool = True) -> Scale:
    """The factor a budgeted plan scales the models by on `host`: from the host's earlier runs
    where it has MIN_HISTORY_RUNS with a model (they say how this host runs them), else from its
    probe. A factor from history is kept in results/durations/<host>.scale.json, so that the plan
    (and which findings it takes) does not move as more runs are added; one from the probe is
    not (the probe can be far off: docs/planning.md), so the plan moves once, when the host first
    has history. keep=False: read it if kept, else make it and write nothing."""
    path = scale_path(results, host)
    try:
        kept = json.loads(path.read_text())
        return Scale(float(kept["factor"]), kept["source"], kept["detail"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    from interference.host import probe

    scale = model_scale(
        history(results, host), study_model, lambda: probe.cached_probe(results, host), study_fixed
    )
    if keep and scale.source == "history":
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}")  # whole or not at all
        part.write_text(json.dumps({**scale.__dict__, "made": time.time()}) + "\n")
        os.replace(part, path)
    return scale


def scale_words(scale: Scale) -> str:
    """How the models are scaled, in the words the plan prints."""
    return (
        f"the models ×{scale.factor:.2f} on this host: {scale.detail}"
        if scale.source != "none"
        else "the models unscaled"
    )


def estimate(
    runs: list[PlannedRun],
    past: dict[str, list[float]],
    model: Callable,
    scale: Scale = Scale(),
    fixed: Callable = lambda r: 0.0,
) -> list[PlannedRun]:
    """Each run with its expected seconds: from history, else model(run), its part beyond the
    wall-clock fixed(run) scaled to this host (None: no estimate)."""
    out = []
    for r in runs:
        if durations := past.get(settings_id(r.settings)):
            seconds, source = statistics.median(durations), "history"
        elif (seconds := model(r)) is not None:
            seconds = fixed(r) + (seconds - fixed(r)) * scale.factor
            source = "model"
        else:
            source = ""
        out.append(PlannedRun(**{**r.__dict__, "seconds": seconds, "source": source}))
    return out


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def images_seconds(images: list[str]) -> float:
    """Image jsons still to make (names like results/images/<host>/docker/base.json)."""
    return sum(BASE_IMAGE_S if Path(i).stem == "base" else IMAGE_S for i in images)


def total_seconds(runs: list[PlannedRun], images: list[str] = ()) -> float:
    known = sum(r.seconds for r in runs if r.seconds is not None)
    return known + after_seconds(len(runs)) + images_seconds(list(images))


def after_seconds(n_runs: int) -> float:
    """Parsing between runs, and everything after the last one."""
    return n_runs * (PARSE_PER_RUN_S + AFTER_PER_RUN_S) + AFTER_RUNS_S


def plan_lines(runs: list[PlannedRun], images: list[str] = (), scale: Scale = Scale()) -> list[str]:
    """What the invocation will do and how long it should take, as printed before it starts."""
    if not runs:
        return [
            "Plan: no runs to do (every run of the config has its meta.json); statistics and report only."
        ]
    groups: dict[tuple[str, str], list[PlannedRun]] = {}
    for r in runs:
        groups.setdefault((r.study, r.runtime), []).append(r)
    parts = ", ".join(f"{s} on {rt}: {len(g)}" for (s, rt), g in groups.items())
    lines = [f"Plan: {len(runs)} runs to do ({parts})."]
    without = sorted({r.study for r in runs if r.seconds is None})
    by_source = {s: sum(r.source == s for r in runs) for s in ("history", "model")}
    total = total_seconds(runs, images)
    lines.append(
        f"Estimate: about {minutes(total)} in all"
        + (" for the runs that have one" if without else "")
        + f" ({total:.0f} s; runs {minutes(sum(r.seconds for r in runs if r.seconds is not None))}: "
        f"{by_source['history']} from this host's earlier runs of the same settings, {by_source['model']} "
        f"from the study's model; {len(images)} image records to make {minutes(images_seconds(list(images)))}; "
        f"parsing, statistics and report {minutes(after_seconds(len(runs)))})."
    )
    if by_source["model"] and scale.source != "none":
        lines.append(f"The models are scaled ×{scale.factor:.2f} to this host ({scale.detail}).")
    lines += [
        f"No estimate for {s}: it has no model of a run and this host has not run it before." for s in without
    ]
    return lines


def _took(meta_path: str) -> float:
    try:
        meta = json.loads(Path(meta_path).read_text())
        return meta["finished"] - meta["started"]
    except (OSError, ValueError, KeyError):
        return 0.0


def _mtime(path: str) -> float:
    """The file's modification time, -inf when it does not exist."""
    try:
        return os.stat(path).st_mtime
    except FileNotFoundError:
        return -math.inf


class Progress(threading.Thread):
    """Prints "run 12 of 60 done, about 14 min left" whenever a planned run's meta.json appears."""

    def __init__(self, runs: list[PlannedRun], stream=None, poll_s: float = 2.0):
        super().__init__(daemon=True, name="interference-progress")
        self.runs, self.poll_s = runs, poll_s
        self.stream = stream or sys.stderr
        self.took: dict[str, float] = {}  # meta path -> seconds, read once per finished run
        # A planned run whose meta.json exists runs again (the drift check's): done when rewritten.
        # Read now, before any run can finish, not when the thread first looks.
        self.before = {r.meta: _mtime(r.meta) for r in runs}

    def line(self, done: list[PlannedRun]) -> str:
        finished = {r.meta for r in done}
        left = [r for r in self.runs if r.meta not in finished]
        for r in done:
            if r.meta not in self.took:
                self.took[r.meta] = _took(r.meta)
        # Scale what is left by how long the finished runs took against their estimates.
        took = sum(self.took[r.meta] for r in done if r.seconds)
        expected = sum(r.seconds for r in done if r.seconds)
        scale = min(max(took / expected, 0.5), 2.0) if took and expected else 1.0
        rest = sum(r.seconds for r in left if r.seconds is not None) * scale + after_seconds(len(left))
        text = f"run {len(done)} of {len(self.runs)} done, about {minutes(rest)} left"
        if any(r.seconds is None for r in left):
            text += " (without the runs that have no estimate)"
        if getattr(self.stream, "isatty", lambda: False)():
            width = 30
            filled = round(width * len(done) / len(self.runs))
            text = "[" + "#" * filled + "." * (width - filled) + "] " + text
        return text

    def run(self) -> None:
        done: list[PlannedRun] = []
        seen: set[str] = set()
        while len(done) < len(self.runs):
            # Only the runs not yet seen finished are looked at again.
            new = [r for r in self.runs if r.meta not in seen and _mtime(r.meta) > self.before[r.meta]]
            if new:
                done += new
                seen.update(r.meta for r in new)
                print(self.line(done), file=self.stream, flush=True)
            time.sleep(self.poll_s)
