"""The case matrix and the containers of each case, as pure functions of the config.

Cases of the papers: 1 one microservice alone in a limited container (the baseline);
2 two microservices in one unlimited container; 3a two unlimited containers; 3b two
containers, each limited like the baseline. And two the papers lack: 1u, the microservice alone
in an unlimited container, which splits a Case 2/3a IR into the limit's removal (1u against 1)
and the partner's arrival (2/3a against 1u); and, for the config's triples only, 2-3a: two of
them in one unlimited container and the third in its own (the run's pair name lists the two
sharing first: S+NS+L runs S and NS together, L apart), the mixed placement of the advice.
A triple runs in Cases 2, 3a and 2-3a, and in 3b where the host has its three containers' cores."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One placement case: its id, its placement in words (as the report says it), whether its
    containers are limited as Case 1's, whether one microservice runs alone (a fresh container
    per iteration), whether the papers measured it, and the alone case its IR is against."""

    id: str
    placement: str
    limited: bool
    alone: bool
    papers: bool
    baseline: str | None  # None: an alone case, itself a baseline

    @property
    def name(self) -> str:
        return f"Case {self.id}"


BASELINE, UNLIMITED, MIXED = "1", "1u", "2-3a"
# The one registry of the cases; every tuple below is derived from it.
REGISTRY = {
    c.id: c
    for c in (
        Case(BASELINE, "one microservice alone in one container, with cgroup limits (the baseline)",
             limited=True, alone=True, papers=True, baseline=None),
        Case(UNLIMITED, "one microservice alone in one container, no limits (not in the papers: separates "
             "the limit's effect from the partner's)", limited=False, alone=True, papers=False, baseline=None),
        Case("2", "both microservices (or a triple's three) in one container, no limits (intra-container)",
             limited=False, alone=False, papers=True, baseline=BASELINE),
        Case("3a", "two containers side by side, no limits (inter-container)",
             limited=False, alone=False, papers=True, baseline=BASELINE),
        Case("3b", "two containers side by side, each limited as in Case 1 (inter-container)",
             limited=True, alone=False, papers=True, baseline=BASELINE),
        Case(MIXED, "three microservices: two in one container, the third in its own, no limits (not in "
             "the papers: the placement advice's mixed placement)",
             limited=False, alone=False, papers=False, baseline=BASELINE),
    )
}  # fmt: skip
CASES = tuple(REGISTRY)
PAPERS_CONCURRENT_CASES = tuple(c.id for c in REGISTRY.values() if c.papers and not c.alone)
CONCURRENT_CASES = tuple(c.id for c in REGISTRY.values() if not c.alone)
# One microservice alone, a fresh container per iteration.
ALONE_CASES = tuple(c.id for c in REGISTRY.values() if c.alone)
# The concurrent cases whose containers have no limits: their partner's effect is against 1u.
UNLIMITED_CASES = tuple(c.id for c in REGISTRY.values() if not c.alone and not c.limited)
# The papers' cases compared two by two (the post-hoc tests' families).
PAPERS_COMPARISONS = tuple(itertools.combinations([c.id for c in REGISTRY.values() if c.papers], 2))
# Case 1 measured once more after every other run (config drift_check): its samples' case.
END = "1-end"


def pairs(microservices: list[str], only: list[str] | None = None) -> list[tuple[str, ...]]:
    """All unordered pairs in config order, self-pairs included: L,S -> LL, LS, SS; or, with
    `only` (the config's `pairs`, e.g. ["S+L"]), those of them, in either order written."""
    every = list(itertools.combinations_with_replacement(microservices, 2))
    if only is None:
        return every
    wanted = {tuple(sorted(members_of(p))) for p in only}
    return [p for p in every if tuple(sorted(p)) in wanted]


def groups(config: dict) -> list[tuple[str, ...]]:
    """The groups the concurrent cases run: the config's pairs, then its `triples` (e.g.
    "NS+S+L"), each triple's members in config order."""
    ms = config["microservices"]
    triples = [tuple(sorted(members_of(t), key=ms.index)) for t in config.get("triples") or []]
    return pairs(ms, config.get("pairs")) + list(dict.fromkeys(triples))


def fits(case: str, n_members: int, limits: dict, cores: int | None = None) -> bool:
    """Whether a concurrent group of n members can run in the case on a host of `cores` cores
    (default this one's): Case 3b pins each container to limits.cpus cores of its own (cpuset
    mode), so a triple needs three times those; the unlimited cases always fit."""
    if case != "3b" or limits.get("cpu_mode") != "cpuset":
        return True
    return n_members * limits["cpus"] <= (cores if cores is not None else len(os.sched_getaffinity(0)))


def pair_name(members) -> str:
    return "+".join(members)


def members_of(pair: str) -> list[str]:
    return pair.split("+")


def repetitions(config: dict, case: str) -> int:
    """Runs of each (case, pair): config repetitions, one number or per case (absent: 1)."""
    reps = config.get("repetitions", 1)
    return reps.get(case, 1) if isinstance(reps, dict) else int(reps)


def mixed_layouts(triple: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The triple's Case 2-3a runs: each member apart once, the two others sharing (listed first)."""
    a, b, c = triple
    return list(dict.fromkeys([(b, c, a), (a, c, b), (a, b, c)]))


def cells(config: dict, case: str) -> list[tuple[str, ...]]:
    """The members of each cell the config runs in the case, in the order of their run's name."""
    if case in ALONE_CASES:
        return [(m,) for m in config["microservices"]]
    if case == MIXED:
        return [layout for g in groups(config) if len(g) == 3 for layout in mixed_layouts(g)]
    # A triple in Case 3b only where the host has its cores (docs/configs.md).
    return [g for g in groups(config) if fits(case, len(g), config.get("limits", {}))]


def _cell_id(case: str, members) -> tuple:
    """What identifies a cell whatever order its members are written in (Case 2-3a: who is apart)."""
    if case == MIXED:
        return (tuple(sorted(members[:2])), *members[2:])
    return tuple(sorted(members))


def runs(config: dict) -> list[dict]:
    """Every (runtime, case, pair, repetition) run of the config: `repetitions` of each cell, and
    a cell's extra_repetitions after them (a cell this config does not run gets none)."""
    out = []
    extra = config.get("extra_repetitions") or {}
    every = [(c, r) for c in config["cases"] for r in range(1, repetitions(config, c) + 1)]
    for runtime, (case, rep) in itertools.product(config["runtimes"], every):
        out += [
            {"runtime": runtime, "case": case, "pair": pair_name(g), "repetition": rep}
            for g in cells(config, case)
        ]
    for runtime in config["runtimes"]:
        for cell, more in extra.items():
            case, pair = cell.split("/")
            runnable = {_cell_id(case, g): g for g in cells(config, case)} if case in config["cases"] else {}
            members = runnable.get(_cell_id(case, members_of(pair)))
            if members is None:
                continue  # a cell this config does not run
            first = repetitions(config, case) + 1
            out += [{"runtime": runtime, "case": case, "pair": pair_name(members), "repetition": r}
                    for r in range(first, first + more)]  # fmt: skip
    return out


def images_needed(config: dict) -> list[str]:
    """Image names: 'base', one per microservice, one per container of several different
    microservices (Case 2's pairs and triples, Case 2-3a's shared pairs)."""
    names = ["base", *config["microservices"]]
    for case in [c for c in ("2", MIXED) if c in config["cases"]]:
        names += [image_for(case, g)[0] for g in cells(config, case)]
    return list(dict.fromkeys(names))


def layout(case: str, n_members: int) -> list[list[int]]:
    """The members (indices) of each container of a run of the case."""
    if case == "2":
        return [list(range(n_members))]
    if case == MIXED:
        return [[0, 1], [2]]
    return [[k] for k in range(n_members)]


def image_for(case: str, members: list[str]) -> list[str]:
    """The image name each container of the case runs (Case 2: one container, all inside)."""
    names = []
    for container in layout(case, len(members)):
        ids = [members[k] for k in container]
        names.append(ids[0] if len(set(ids)) == 1 else pair_name(ids))
    return names


def limits_for(case: str, member_index: int, limits: dict, cores: list[int] | None = None) -> dict:
    """cgroup limits of container member_index (0, 1 or 2) of a case; {} means unlimited.

    In cpuset mode the Case 3b containers get disjoint cores, as the papers' one core each,
    taken in order from the cores this run may use (`cores`, default its CPU affinity: a host
    confined to some cores, such as an edge node, has others than 0 and 1)."""
    if case in (UNLIMITED, *UNLIMITED_CASES):
        return {}
    n = limits["cpus"]
    out = {"memory": limits["memory"]}
    if limits["cpu_mode"] == "cpuset":
        mine = sorted(cores if cores is not None else os.sched_getaffinity(0))[member_index * n :][:n]
        if len(mine) < n:
            raise ValueError(
                f"member {member_index + 1} needs {n} cores of its own; this run may use {len(mine) + member_index * n} of them"
            )
        contiguous = mine == list(range(mine[0], mine[0] + n))
        out["cpuset"] = f"{mine[0]}-{mine[-1]}" if contiguous and n > 1 else ",".join(map(str, mine))
    else:
        out["cpus"] = float(n)
    return out


def mark_overlap(members: list[list[dict]]) -> tuple[float | None, float | None]:
    """Mark each iteration in_overlap when it ran wholly while both members were running.

    The overlap is from the later first start to the earlier last end of the members;
    an iteration ending after it ran (partly) alone. Returns (overlap_start, overlap_end)."""
    spans = [(min(i["start"] for i in its), max(i["end"] for i in its)) for its in members if its]
    if len(spans) < len(members) or not spans:
        for its in members:
            for it in its:
                it["in_overlap"] = False
        return None, None
    lo, hi = max(s for s, _ in spans), min(e for _, e in spans)
    for its in members:
        for it in its:
            it["in_overlap"] = lo <= it["start"] and it["end"] <= hi
    return lo, hi
