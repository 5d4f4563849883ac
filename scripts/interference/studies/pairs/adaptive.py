"""The pair study's stopping rules (config studies.pairs.adaptive), decided while a run measures.

Case 1: after each iteration from the minimum on, the outputs so far are parsed with the
microservice's own parser and the run stops once the 95 % confidence interval of every
metric's mean (Student's t) is within +-target_ci of it, or at max_iterations.
Concurrent cases: shortly before the window closes, the runner counts each member's completed
iterations since the window opened; while one has fewer than min_overlap_samples, the window's
end moves later (by what the missing iterations took so far), up to window_cap_s."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from scipy import stats

from interference import parsers
from interference.core.loop import move_window_end, read_iterations

DECIDE_BEFORE_END_S = 2.0  # the loops read the end before each iteration: decide ahead of it


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
    inside the overlap (or its cap); returns what was decided, for meta.json."""
    k, cap_end, requested_end = rule["min_overlap_samples"], start_at + rule["window_cap_s"], end
    moves = []
    while True:
        time.sleep(max(0.0, end - DECIDE_BEFORE_END_S - time.time()))
        done = [read_iterations(d, timeout_s) for d in member_dirs]
        # Only iterations from the overlap's start on will count: a member's iterations begun
        # before the other member's first (they start apart by up to a second) ran alone.
        firsts = [min(i["start"] for i in its) for its in done if its]
        overlap_start = max(firsts) if len(firsts) == len(done) else math.inf
        done = [[i for i in its if i["start"] >= max(start_at, overlap_start)] for its in done]
        counts = [len(its) for its in done]
        if min(counts) >= k or end >= cap_end:
            break
        # What the missing iterations of the slowest member take, at its pace so far.
        need = max(
            (k - len(its)) * (float(np.mean([i["end"] - i["start"] for i in its])) if its else time.time() - start_at)
            for its in done
        )  # fmt: skip
        new_end = min(cap_end, end + math.ceil(need) + 1)
        move_window_end(outdir, start_at, new_end)
        moves.append({"at": time.time(), "counts": counts, "end": new_end})
        end = new_end
    return {
        "rule": f"at least {k} completed iterations per member, window up to {rule['window_cap_s']} s",
        "window_s": end - start_at,
        "extended_s": end - requested_end,
        "moves": moves,
        "counts_at_close": counts,
        "stopped_by": "samples reached" if min(counts) >= k else "window cap",
        "end": end,
    }
