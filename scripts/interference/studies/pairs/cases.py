"""The case matrix and the containers of each case, as pure functions of the config.

Cases of the papers: 1 one microservice alone in a limited container (the baseline);
2 two microservices in one unlimited container; 3a two unlimited containers; 3b two
containers, each limited like the baseline. And one the papers lack: 1u, the microservice alone
in an unlimited container, which splits a Case 2/3a IR into the limit's removal (1u against 1)
and the partner's arrival (2/3a against 1u)."""

from __future__ import annotations

import itertools
import os

CASES = ("1", "1u", "2", "3a", "3b")
CONCURRENT_CASES = ("2", "3a", "3b")
UNLIMITED = "1u"
# One microservice alone, a fresh container per iteration.
ALONE_CASES = ("1", UNLIMITED)
# The concurrent cases whose containers have no limits: their partner's effect is against 1u.
UNLIMITED_CASES = ("2", "3a")
# Case 1 measured once more after every other run (config drift_check): its samples' case.
END = "1-end"


def pairs(microservices: list[str], only: list[str] | None = None) -> list[tuple[str, str]]:
    """All unordered pairs in config order, self-pairs included: L,S -> LL, LS, SS; or, with
    `only` (the config's `pairs`, e.g. ["S+L"]), those of them, in either order written."""
    every = list(itertools.combinations_with_replacement(microservices, 2))
    if only is None:
        return every
    wanted = {tuple(sorted(members_of(p))) for p in only}
    return [p for p in every if tuple(sorted(p)) in wanted]


def pair_name(members) -> str:
    return "+".join(members)


def members_of(pair: str) -> list[str]:
    return pair.split("+")


def repetitions(config: dict, case: str) -> int:
    """Runs of each (case, pair): config repetitions, one number or per case (absent: 1)."""
    reps = config.get("repetitions", 1)
    return reps.get(case, 1) if isinstance(reps, dict) else int(reps)


def runs(config: dict) -> list[dict]:
    """Every (runtime, case, pair, repetition) run of the config: `repetitions` of each cell, and
    a cell's extra_repetitions after them."""
    out = []
    extra = config.get("extra_repetitions") or {}
    every = [(c, r) for c in config["cases"] for r in range(1, repetitions(config, c) + 1)]
    for runtime, (case, rep) in itertools.product(config["runtimes"], every):
        groups = (
            [(m,) for m in config["microservices"]]
            if case in ALONE_CASES
            else pairs(config["microservices"], config.get("pairs"))
        )
        out += [{"runtime": runtime, "case": case, "pair": pair_name(g), "repetition": rep} for g in groups]
    ran = {tuple(sorted(g)) for g in pairs(config["microservices"], config.get("pairs"))}
    for runtime in config["runtimes"]:
        for cell, more in extra.items():
            case, pair = cell.split("/")
            members = members_of(pair)
            known = len(members) == 1 if case in ALONE_CASES else tuple(sorted(members)) in ran
            if case not in config["cases"] or not known or not set(members) <= set(config["microservices"]):
                continue  # a cell this config does not run
            members = sorted(members, key=config["microservices"].index)
            first = repetitions(config, case) + 1
            out += [{"runtime": runtime, "case": case, "pair": pair_name(members), "repetition": r}
                    for r in range(first, first + more)]  # fmt: skip
    return out


def images_needed(config: dict) -> list[str]:
    """Image names: 'base', one per microservice, one per mixed pair for Case 2."""
    names = ["base", *config["microservices"]]
    if "2" in config["cases"]:
        names += [pair_name(p) for p in pairs(config["microservices"], config.get("pairs")) if p[0] != p[1]]
    return names


def image_for(case: str, members: list[str]) -> list[str]:
    """The image name each container of the case runs (Case 2: one container, both inside)."""
    if case == "2":
        return [members[0] if members[0] == members[1] else pair_name(members)]
    return list(members)


def limits_for(case: str, member_index: int, limits: dict, cores: list[int] | None = None) -> dict:
    """cgroup limits of container member_index (0 or 1) of a case; {} means unlimited.

    In cpuset mode the two Case 3b containers get disjoint cores, as the papers' one core each,
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
