"""The partner switched on and off inside one run (config studies.pairs.phases): the paired design.

A concurrent run's window is cut into blocks; each block has one phase with every member running
and, per member, one phase in which it runs alone while the others are held (their loops wait,
microservice-loop reads the schedule before each iteration). The phases of each block come in a
fresh random order (Abedi & Brecht's randomized multiple interleaved trials), so that neither a
trend nor a rhythm of the host lines up with one side. In Case 3b a member's alone phase is Case 1
exactly (its limited container, its core); in Cases 2, 3a and 2-3a it is Case 1u.

  <outdir>/phases   one line a phase: "START END ,ACTIVE," (1-based members), host epochs

Each iteration is then labelled from its timestamps, not from the plan: *with* when it ran wholly
inside an all-on phase while every other member was busy throughout, *without* when it ran wholly
inside its own alone phase and no other member's iteration touched it, else *mixed* (never
counted). With `switch: false` (the A/A test) nobody is ever held: the labels follow the schedule
alone, so *with* and *without* differ by nothing but time."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from interference.core.microservices import registry

PHASES_FILE = "phases"
WITH, WITHOUT, MIXED = "with", "without", "mixed"
# Between two iterations of one loop: its shell's own work (date, awk, the cgroup reads). A
# longer gap in a partner's iterations means it did not run there.
LOOP_GAP_S = 0.25


@dataclass(frozen=True)
class Phase:
    block: int  # 1-based
    start: float
    end: float
    active: tuple[int, ...]  # 1-based members that run in it

    def line(self) -> str:
        return f"{self.start:.3f} {self.end:.3f} ,{','.join(map(str, self.active))},"


def settings(cfg: dict, sizes: dict[str, dict]) -> dict:
    """A run's phase settings from the config's `phases` and its members' sizes: a phase holds
    cfg's iterations of the slowest member and one more (the first after a switch is often
    mixed), by the iteration-time model (containers/iteration-times.yaml), at least min_phase_s."""
    ms = registry()
    times = [ms[m].iteration_seconds(s) or 0.0 for m, s in sizes.items()]
    phase_s = max(cfg.get("min_phase_s", 1), (cfg.get("iterations", 3) + 1) * max(times, default=0.0))
    return {"blocks": cfg.get("blocks", 2), "phase_s": round(phase_s, 1), "switch": cfg.get("switch", True)}


def window_s(phase_settings: dict, n_members: int) -> float:
    """The window its blocks fill (each one all-on phase and one alone phase per member)."""
    return phase_settings["blocks"] * (n_members + 1) * phase_settings["phase_s"]


def blocks(window_s: float, phase_s: float, n_members: int) -> int:
    """Whole blocks a window holds."""
    return int(round(window_s / (phase_s * (n_members + 1)), 6))


def schedule(start: float, window_s: float, phase_s: float, n_members: int, seed: int) -> list[Phase]:
    """The run's phases from `start`: whole blocks, each in its own random order (from `seed`, the
    run's, so that meta.json's schedule can be made again)."""
    rng = random.Random(seed)
    everyone = tuple(range(1, n_members + 1))
    kinds = [everyone] + [(k,) for k in everyone]
    out, t = [], start
    for b in range(1, blocks(window_s, phase_s, n_members) + 1):
        for kind in rng.sample(kinds, len(kinds)):
            out.append(Phase(b, round(t, 3), round(t + phase_s, 3), kind))
            t += phase_s
    return out


def write(outdir: Path, plan: list[Phase], switch: bool = True) -> None:
    """The schedule the loops read. Without `switch` (the A/A test) every phase keeps everyone
    active: nobody is held, and the plan's kinds serve only the labels."""
    everyone = tuple(sorted({k for p in plan for k in p.active}))
    lines = [(p if switch else Phase(p.block, p.start, p.end, everyone)).line() for p in plan]
    tmp = outdir / f"{PHASES_FILE}.tmp"
    tmp.write_text("".join(line + "\n" for line in lines))
    tmp.rename(outdir / PHASES_FILE)  # appears whole


def _busy_spans(iterations: list[dict]) -> list[tuple[float, float]]:
    """A loop's iterations merged where the gap between them is only its own overhead."""
    spans: list[list[float]] = []
    for it in sorted(iterations, key=lambda i: i["start"]):
        if spans and it["start"] - spans[-1][1] <= LOOP_GAP_S:
            spans[-1][1] = max(spans[-1][1], it["end"])
        else:
            spans.append([it["start"], it["end"]])
    return [(a, b) for a, b in spans]


def _covers(spans, start: float, end: float) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def _touches(iterations: list[dict], start: float, end: float) -> bool:
    return any(i["start"] < end and start < i["end"] for i in iterations)


def label(members: list[list[dict]], plan: list[Phase], switch: bool = True) -> None:
    """Set each iteration's `phase` (with, without, mixed) and `block` (0 where mixed)."""
    spans = [_busy_spans(its) for its in members]
    n = len(members)
    for k, its in enumerate(members):
        others = [j for j in range(n) if j != k]
        for it in its:
            inside = [p for p in plan if p.start <= it["start"] and it["end"] <= p.end]
            kind, block = MIXED, 0
            if inside:
                p = inside[0]
                if len(p.active) == n:
                    busy = all(_covers(spans[j], it["start"], it["end"]) for j in others)
                    kind = WITH if busy or not switch else MIXED
                elif p.active == (k + 1,):
                    quiet = not any(_touches(members[j], it["start"], it["end"]) for j in others)
                    kind = WITHOUT if quiet or not switch else MIXED
                block = p.block if kind != MIXED else 0
            it["phase"], it["block"] = kind, block
