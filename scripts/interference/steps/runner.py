"""The generic runner: one run of any study on any runtime.

  python -m interference.steps.runner --study S --settings JSON --images I.json... --meta M/meta.json

What every study needs, done once here: the preflight check of the runtime, the host-wide
measurement lock, SIGTERM/SIGINT turned into a clean stop, a fresh raw folder, provenance
(host, runtime, settings), contention telemetry sampled while it measures (host/telemetry.py),
removal of everything the run made (always, also on error), and meta.json written atomically and last, so an interrupted run leaves none and is run again.
A run already measured in the same folder (a forced rerun, or settings that changed) is set aside
until the new one is written, and put back if it is not: with snakemake's update() on meta.json
(workflow/rules/run.smk), which keeps and restores the old meta.json, an interrupted rerun loses
nothing and the next invocation finds the run as it was.
What is particular to the study is in its execute()."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import shutil
import signal
import sys
import time
from pathlib import Path

from interference import runtimes, studies
from interference.core.labels import RUN_LABEL
from interference.core.records import RunRecord, write
from interference.core.run_context import RunContext
from interference.host import info as hostinfo
from interference.host import telemetry
from interference.host.locks import measurement_lock
from interference.steps import unfinished
from interference.stores import durations


class Terminated(Exception):
    pass


INTERRUPTED: list[int] = []


def _terminate(signum, frame):
    INTERRUPTED.append(signum)
    raise Terminated(f"signal {signum}")


def execute(study, ctx: RunContext) -> RunRecord:
    """Run the study in a fresh raw folder; cleanup is unconditional."""
    # What earlier runs of this host could not clean up (the engine was down): removed first.
    reaped = unfinished.reap()
    for line in reaped:
        print(f"reaped: {line}", flush=True)
    unfinished.note(ctx.run_id, ctx.settings["runtime"], ctx.settings.get("runtime_options"))
    ctx.outdir.mkdir(parents=True)  # empty: a measurement there before is set aside (set_aside)
    host_info, runtime_info, started = hostinfo.describe(), ctx.runtime.describe(), time.time()
    interval_s = ctx.settings.get("telemetry_interval_s", 0)
    if interval_s:
        ctx.sampler = telemetry.Sampler(ctx.outdir / "telemetry.tsv", interval_s, ctx.runtime.entity_pid)
    sampled = None
    try:
        runtime_run = ctx.runtime.open_run(
            ctx.outdir, ctx.labels, ctx.images, network_mode=study.network_mode(ctx.settings)
        )
        with ctx.sampler or contextlib.nullcontext():
            study_fields = study.execute(ctx)
        if ctx.sampler:
            sampled = {"interval_s": interval_s, "samples": ctx.sampler.samples, "file": "telemetry.tsv"}
    finally:
        removed = ctx.runtime.remove_labelled(RUN_LABEL, ctx.run_id)
        unfinished.done(ctx.run_id)  # not reached when the removal failed: the next run reaps
    return RunRecord(
        study=study.name,
        settings=ctx.settings,
        run_id=ctx.run_id,
        host_info=host_info,
        runtime_info=runtime_info,
        started=started,
        finished=time.time(),
        runtime_run=runtime_run,
        telemetry=sampled,
        leftovers_removed=removed,
        reaped_before=reaped,
        containers=ctx.containers,
        events=ctx.events,
        study_fields=study_fields,
    )


def previous_of(outdir: Path) -> Path:
    return outdir.with_name(f".{outdir.name}.previous")


def set_aside(outdir: Path) -> Path | None:
    """Move a measurement already in outdir beside it (None when there is none). One left by a
    runner that was killed is the older measurement unless outdir holds a finished one."""
    kept = previous_of(outdir)
    if kept.exists():
        if (outdir / "meta.json").exists():
            shutil.rmtree(kept)
        else:
            shutil.rmtree(outdir, ignore_errors=True)
            return kept
    if not outdir.exists():
        return None
    outdir.rename(kept)
    return kept


def settle_previous(outdir: Path, kept: Path | None, replaced: bool) -> None:
    """The new run written (`replaced`): drop the old one; else put the old one back."""
    if kept is None:
        return
    if replaced:
        shutil.rmtree(kept)
        return
    shutil.rmtree(outdir, ignore_errors=True)
    kept.rename(outdir)


def full_disk(error: OSError, outdir: Path) -> str:
    """One line for a full file system: which folder, and what was kept."""
    where = Path(error.filename).parent if error.filename else outdir
    return (
        f"error: no space left on the device of {where} (df {where}): this run is not recorded (no "
        f"meta.json; its partial raw files are in {outdir}); every finished run is kept, and the same "
        "command runs this one again once there is space"
    )


def _or_what(n) -> str:
    return "?" if n is None else str(n)


def read_images(paths) -> dict:
    images = {}
    for p in paths:
        d = json.loads(Path(p).read_text())
        images[d["image"]] = {"ref": d["ref"], "id": d["id"]}
    return images


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", required=True)
    ap.add_argument("--settings", required=True, help="JSON: the run's slice of the config")
    ap.add_argument("--images", nargs="*", type=Path, default=[], help="image json files it uses")
    ap.add_argument(
        "--meta", type=Path, required=True, help="meta.json to write (its folder gets the raw files)"
    )
    a = ap.parse_args(argv)
    settings = json.loads(a.settings)
    study = studies.get(a.study)
    # Ctrl-C reaches the whole process group: the engine's CLI may fail before Python sees it.
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    try:
        rt = runtimes.get(settings["runtime"], settings.get("runtime_options"))
        rt.check()  # fail with what is missing before anything is made
    except runtimes.RuntimeUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ctx = RunContext(settings, a.meta.parent, rt, read_images(a.images))
    # The study's run code imported before the lock, not in the run: the pair study's (numpy,
    # scipy for its stopping rules) took 1-2 s of CPU, in the lock and in the run's telemetry.
    study.step("execute")
    kept = set_aside(ctx.outdir)
    rc = 1
    try:
        rc = measure_and_record(study, ctx, a, kept is not None)
    finally:
        settle_previous(ctx.outdir, kept, rc == 0)
    return rc


def measure_and_record(study, ctx: RunContext, a: argparse.Namespace, again: bool = False) -> int:
    """The run under the measurement lock, then its meta.json: 0 once that is written (`again`: a
    measurement made before waits beside it)."""
    try:
        with measurement_lock():
            print(f"run {ctx.run_id}: {study.name} {a.meta.parent}", flush=True)
            record = execute(study, ctx)
    except runtimes.RuntimeUnavailable as e:  # found only once the run began (e.g. an inner engine)
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        if e.errno != errno.ENOSPC or INTERRUPTED:
            raise
        print(full_disk(e, a.meta.parent), file=sys.stderr)
        return 1
    except Exception:
        if not INTERRUPTED:
            raise
        after = (
            "the one made before is put back as it was"
            if again
            else "the next snakemake invocation runs it again"
        )
        print(
            f"interrupted (signal {INTERRUPTED[0]}): everything the run made was removed and no meta.json "
            f"written; {after}",
            file=sys.stderr,
        )
        return 128 + INTERRUPTED[0]
    try:
        write(record, a.meta)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        a.meta.with_suffix(".tmp").unlink(missing_ok=True)
        print(full_disk(e, a.meta.parent), file=sys.stderr)
        return 1
    try:  # the time estimate's history: kept when the raw results are deleted
        durations.record(record.to_json())
    except (OSError, KeyError) as e:
        print(f"warning: the run was not added to the durations ledger: {e}", file=sys.stderr)
    print(
        f"{_or_what(record.n_iterations)} iterations, {_or_what(record.n_failed)} failed; "
        f"removed {len(record.leftovers_removed)} things the run made at the end",
        flush=True,
    )
    for e in record.events:
        print("event:", e, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
