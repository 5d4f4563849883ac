"""The pieces a plan is made of (steps/plan.py, steps/plan_decisions.py): a finding's need (the
keys of a study's config part it adds), the plan record, the merge of needs into a config and
the greedy fit of needs within a budget."""

from __future__ import annotations

import copy
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from interference import studies
from interference.steps.verdict_price import FACTORS


@dataclass(frozen=True)
class Need:
    study: str
    part: dict  # keys of studies.<study> (its runtimes among them where it names them)


@dataclass
class Plan:
    planned: list[str] = field(default_factory=list)
    over_budget: dict[str, float] = field(default_factory=dict)  # id -> minutes it would add
    elsewhere: dict[str, str] = field(default_factory=dict)  # id -> why not here
    not_testable: dict[str, str] = field(default_factory=dict)  # id -> what this host lacks
    budget_min: float | None = None
    planned_min: float | None = None
    scale: str | None = None  # how the models were scaled to this host, in words
    # id -> (runs factor, probability of "reproduced" at it) for the findings priced by the
    # runs their verdict needs; `undecided`: those no factor up to the largest decides (planned last).
    priced: dict[str, tuple[float, float]] = field(default_factory=dict)
    undecided: list[str] = field(default_factory=list)
    power: float | None = None
    noise_from: str = ""  # where the priced targets' noise came from, in words

    def record(self) -> dict:
        return {
            "planned": self.planned,
            "priced": {k: [f, round(p, 3)] for k, (f, p) in self.priced.items()},
            "undecided": self.undecided,
            "decision_power": self.power,
            "noise_from": self.noise_from,
            "max_factor": FACTORS[-1],
            "over_budget": {k: round(v, 1) for k, v in self.over_budget.items()},
            "elsewhere": self.elsewhere,
            "not_testable": self.not_testable,
            "budget_min": self.budget_min,
            "planned_min": None if self.planned_min is None else round(self.planned_min, 1),
            "scale": self.scale,
        }


def _unite(a: list, b: list) -> list:
    return a + [x for x in b if x not in a]


def _counts(d: dict) -> bool:
    return all(isinstance(x, int) for x in d.values())


def _defaults(study: str) -> set[str]:
    """The keys of a study's config part that have a default (absent means that default)."""
    try:
        props = studies.get(study).config_schema().get("properties", {})
    except KeyError:
        return set()
    return {k for k, spec in props.items() if "default" in spec or k == "pairs"}


def merged(config: dict, needs: list[Need]) -> dict:
    """The config with the needs added: lists united (a list the config leaves to its default,
    usually "all", stays so), other keys only where the config has none; a study the config
    runs keeps its runtimes (the top-level ones, made explicit)."""
    out = copy.deepcopy(config)
    out.setdefault("studies", {})
    top = list(out.get("runtimes") or ["docker"])
    for part in out["studies"].values():
        part.setdefault("runtimes", list(top))
    for n in needs:
        part = out["studies"].get(n.study)
        if part is None:
            out["studies"][n.study] = {"runtimes": list(top), **copy.deepcopy(n.part)}
            continue
        defaults = _defaults(n.study)
        for k, v in n.part.items():
            if isinstance(v, list) and isinstance(part.get(k), list):
                part[k] = _unite(part[k], v)
            elif isinstance(v, dict) and isinstance(part.get(k), dict) and _counts(v) and _counts(part[k]):
                part[k] = {c: max(part[k].get(c, 0), v.get(c, 0)) for c in {**part[k], **v}}  # runs per cell
            elif k not in part and not (isinstance(v, list) and k in defaults):
                # A list the config leaves to its default keeps it (no `pairs`: every pair).
                part[k] = copy.deepcopy(v)
    every = top
    for part in out["studies"].values():
        every = _unite(every, part["runtimes"])
    out["runtimes"] = every
    return out


def fit(base: dict, needs: dict[str, Need], seconds: Callable[[dict], float], budget_s: float) -> Plan:
    """Findings taken cheapest first by the seconds their runs add to those already planned,
    while the total fits budget_s. A finding's cost changes as others are taken (shared runs make
    it cheaper; a case another adds may cross with its pairs), so each is re-costed when it
    comes up and put back if another is now cheaper (a greedy rule, not an optimum)."""
    chosen: list[Need] = []
    total = seconds(base)
    queue = [(seconds(merged(base, [n])) - total, i) for i, n in needs.items()]
    heapq.heapify(queue)
    plan = Plan()
    while queue:
        stale, i = heapq.heappop(queue)
        extra = seconds(merged(base, [*chosen, needs[i]])) - total
        if queue and extra > queue[0][0] + 1e-9:
            heapq.heappush(queue, (extra, i))  # others may be cheaper now: look again
            continue
        if total + extra <= budget_s:
            chosen.append(needs[i])
            total += extra
            plan.planned.append(i)
        else:
            plan.over_budget[i] = extra / 60
    plan.planned_min = total / 60
    return plan
