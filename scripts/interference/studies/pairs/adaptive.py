"""The pair study's stopping rules (config studies.pairs.adaptive), decided while a run measures.

Case 1: after each iteration from the minimum on, the outputs so far are parsed with the
microservice's own parser and the run stops once the 95 % confidence interval of every
metric's mean (Student's t) is within +-target_ci of it, or at max_iterations.
Concurrent cases: shortly before the window closes, the runner counts each member's completed
iterations since the window opened; while one has fewer than min_overlap_samples, the window's
end moves later (to when the missing iterations should have finished at the pace so far), up
to window_cap_s."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from scipy import stats

from interference import parsers
from interference.core.loop import move_window_end, read_iterations

DECIDE_BEFORE_END_S = 2.0  # the loops read the end before each iteration: decide ahead of it
LAST_LOOK_S = 1.0  # a last look before an end that should do (the loops read it through 9p in a VM)
SLACK_S = 1.0  # beyond the missing iterations' time at the pace so far


def relative_half_widths(values: dict[str, list[float]]) -> dict[str, float | None]:
    """Per metric: the 95 % CI half-width of the mean over |mean| (None below 2 values)."""
    out = {}
    for metric, v in values.items():
        x = np.asarray(v, dtype=float)
        if len(x) < 2 or x.mean() == 0:
            out[metric] = None
            continue
        half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
        out[metric] = float(half / abs(x.mean()))
    return out


def case1_precision(member_dir: Path, microservice, timeout_s: float) -> dict[str, float | None]:
    """The precision reached so far by a Case 1 run's iterations (failed ones count for nothing)."""
    parse = parsers.get(microservice.parser)
    values: dict[str, list[float]] = {m.name: [] for m in microservice.metrics}
    for it in read_iterations(member_dir, timeout_s):
        if it["status"] != "ok":
            continue
        try:
            got = parse((member_dir.parent / it["stdout"]).read_text(errors="replace"),
                        (member_dir.parent / it["stderr"]).read_text(errors="replace"))  # fmt: skip
        except (parsers.ParseError, OSError):
            continue
        for metric, v in got.items():
            if metric in values and isinstance(v, int | float):
                values[metric].append(float(v))
    return relative_half_widths(values)


def case1_done(precision: dict[str, float | None], target_ci: float) -> bool:
    return bool(precision) and all(p is not None and p <= target_ci for p in precision.values())


def extend_window(outdir: Path, member_dirs: list[Path], start_at: float, end: float, rule: dict,
                  timeout_s: float) -> dict:  # fmt: skip
    """Hold the window open until each member has rule's min_overlap_samples completed iterations
    inside the overlap (or its cap); returns what was decided, for meta.json.

    Looked at DECIDE_BEFORE_END_S before the end: a member short of its samples moves the end to
    when its missing iterations should have finished at its pace so far, counted from now (plus
    SLACK_S); where the end in force should already do, it is looked at once more LAST_LOOK_S
    before it. (Counting from the old end, with a member that had no counted iteration yet paced
    by the whole time since the start, made 4-s windows 12 s long: 7-10 samples where 3 were
    asked, 2026-12-01.)"""
    k, cap_end, requested_end = rule["min_overlap_samples"], start_at + rule["window_cap_s"], end
    moves, look_at = [], end - DECIDE_BEFORE_END_S
    while True:
        time.sleep(max(0.0, look_at - time.time()))
        counts, missing_s = overlap_counts(member_dirs, start_at, k, timeout_s)
        if min(counts) >= k or end >= cap_end:
            break
        wanted = time.time() + missing_s + SLACK_S
        if wanted <= end and look_at < end - LAST_LOOK_S:
            look_at = end - LAST_LOOK_S
            continue
        end = min(cap_end, max(wanted, end + SLACK_S))
        move_window_end(outdir, start_at, end)
        moves.append({"at": time.time(), "counts": counts, "end": end})
        look_at = end - DECIDE_BEFORE_END_S
    return {
        "rule": f"at least {k} completed iterations per member, window up to {rule['window_cap_s']} s",
        "window_s": end - start_at,
        "extended_s": end - requested_end,
        "moves": moves,
        "counts_at_close": counts,
        "stopped_by": "samples reached" if min(counts) >= k else "window cap",
        "end": end,
    }


def overlap_counts(
    member_dirs: list[Path], start_at: float, k: int, timeout_s: float
) -> tuple[list[int], float]:
    """Each member's completed iterations inside the overlap so far, and the seconds from now
    until the slowest should have k: its missing iterations at its mean iteration time (every
    completed one counts for the pace), less what its iteration under way has run; a member
    with none completed is paced by how long it has been running (its first has run that long)."""
    done = [read_iterations(d, timeout_s) for d in member_dirs]
    # Only iterations from the overlap's start on will count: a member's iterations begun
    # before the other member's first (they start apart by up to a second) ran alone.
    firsts = [min(i["start"] for i in its) for its in done if its]
    overlap_start = max(firsts) if len(firsts) == len(done) else math.inf
    counted = [[i for i in its if i["start"] >= max(start_at, overlap_start)] for its in done]
    now, missing = time.time(), [0.0]
    for its, inside in zip(done, counted):
        if len(inside) >= k:
            continue
        if its:
            pace, running = (
                float(np.mean([i["end"] - i["start"] for i in its])),
                now - max(i["end"] for i in its),
            )
        else:  # its first iteration has run since the start, at least
            pace = running = max(now - start_at, 0.0)
        missing.append(max(0.0, (k - len(inside)) * pace - min(running, pace)))
    return [len(c) for c in counted], max(missing)
