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

The workflow prints the plan before the first job (also in a dry run, -n); steps/progress.py
then says the time left after each run. The ledger of past runs is stores/durations.py."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from interference.stores.durations import history, settings_id

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
