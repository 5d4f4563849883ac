"""The findings drive the plan: a config that names findings (`findings: ["*"]`, or ids and
globs such as "001-*") gets the runs each one's check needs, added to its studies, the way a
Snakemake target derives its DAG.

Each catalogue entry (report/published/findings.yaml) is planned by its study: a study that
knows its checks' cells says which keys its config part needs for one (Study.finding_needs:
the pair study's microservices, pairs and cases from the check's args), or why it cannot be
planned here (another host, another definition of the study); any other study's needs are its
part of the shipped config the entry names (`config:`), whole. The needs are merged into the
config: lists united, other keys only where the config has none, a study the config has
keeping its runtimes.

With `budget_min`, findings are taken cheapest first by the minutes of runs each adds to those
already planned (the studies' models of a run, scaled to this host: estimate.model_scale with
its probe), re-costed lazily as shared runs make others cheaper, until the next would not fit;
the others are recorded as over the budget with the minutes they would add. With the config's
decision_power, a pair finding is priced by the runs its verdict needs instead
(steps/plan_decisions.py). The plan is kept
in the config as `findings_plan` (so environment.json records it and the scorecard names why a
finding did not run) and cached under results/plan/ by its inputs, so that every job process
reads the same plan."""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import heapq
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from interference import REPO_ROOT, studies
from interference.core.yaml_files import load_once
from interference.steps.verdict_price import FACTORS

CATALOGUE = REPO_ROOT / "report" / "published" / "findings.yaml"
# What runs besides the runs, in a budget (steps/estimate.py's constants for them are per run; this
# is the fixed part: the base image, the images, the statistics and the report, measured here).
FIXED_S = 300.0


class PlanError(ValueError):
    """A findings pattern that matches no finding; the message names it."""


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


def catalogue(path: Path = CATALOGUE) -> list[dict]:
    return yaml.safe_load(Path(path).read_text()) or []


def select(entries: list[dict], patterns: list[str]) -> list[dict]:
    """The entries whose id matches a pattern (fnmatch), in the catalogue's order."""
    for p in patterns:
        if not any(fnmatch.fnmatchcase(e["id"], p) for e in entries):
            known = ", ".join(e["id"] for e in entries[:3])
            raise PlanError(
                f"findings: {p!r} matches no finding of the catalogue (ids such as {known}, or '*')"
            )
    return [e for e in entries if any(fnmatch.fnmatchcase(e["id"], p) for p in patterns)]


def _other_host(cfg: dict) -> bool:
    parts = cfg.get("studies", {}).values()
    return len(cfg.get("run_on") or []) > 1 or any(p.get("remote_host") for p in parts if isinstance(p, dict))


def need_of(entry: dict) -> Need | str:
    """What the entry's check needs in the config, or why it cannot be planned here. A study's
    own needs (its cells) narrow its part of the shipped config the entry names, which gives
    the rest (sizes, iterations); the pair study's needs stand alone (the config gives those)."""
    study = studies.get(entry["study"])
    found = study.finding_needs(entry["check"], entry.get("args") or {})
    if isinstance(found, str):
        return f"{found}: run {entry['config']}" if entry.get("config") else found
    if entry["study"] == "pairs" or not entry.get("config"):
        return Need(entry["study"], found) if isinstance(found, dict) else "no shipped config runs it"
    cfg = load_once(REPO_ROOT / entry["config"])
    if _other_host(cfg):
        return f"needs a second host: run {entry['config']} (see docs/hosts.md)"
    part = cfg["studies"][entry["study"]]  # load_once gave a copy of its own
    part.setdefault("runtimes", list(cfg.get("runtimes", ["docker"])))
    part |= found or {}
    return Need(entry["study"], part)


def lacking(need: Need, runtime_options: dict) -> str | None:
    """What this host lacks for a need, as the scorecard says it, or None: VMs that would run
    under TCG (an emulator, not a hypervisor), OVS without its kernel datapath."""
    from interference import runtimes

    if "vm" in need.part.get("runtimes", []):
        accel, why = runtimes.ADAPTERS["vm"](**runtime_options.get("vm", {})).accel()
        if accel == "tcg":
            return f"VMs here run under TCG, an emulator, not a hypervisor ({why})"
    modes = [*need.part.get("modes", []), *need.part.get("nested_modes", [])]
    if any("ovs" in m for m in modes) and not Path("/sys/module/openvswitch").exists():
        return "no Open vSwitch kernel module here: only its userspace datapath runs, not the one the paper measured"
    return None


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


def plan_key(config: dict, entries: list[dict], budget: float | None) -> str:
    """The plan's cache key: the config, the catalogue's entries and the budget, not the host's
    scale. A plan made once stays for the same config: as this host's history grows its models
    change, and a re-plan would drop findings whose runs are on disk (issue 52)."""
    text = json.dumps([config, entries, budget], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(
    config: dict,
    seconds: Callable[[dict], float] | None = None,
    cache_dir: Path | None = None,
    path: Path = CATALOGUE,
    scale_said: str | None = None,
    noise=None,
) -> dict:
    """The config with its findings' runs added (and `findings_plan` recorded); `seconds` gives
    a config's model seconds on this host (needed with budget_min), `scale_said` how the models
    were scaled to it (recorded with the plan; a cached plan keeps its own); with the config's
    decision_power, `noise` prices each finding by the runs its verdict needs (fit_decisions)."""
    entries = select(catalogue(path), config.get("findings") or [])
    base = {k: v for k, v in config.items() if k not in ("findings", "budget_min", "findings_plan")}
    # Extra runs that settle.py adds do not change which findings are planned (nor the cache).
    base = copy.deepcopy(base)
    settling = {
        n: p.pop("extra_repetitions") for n, p in base.get("studies", {}).items() if "extra_repetitions" in p
    }
    needs, plan = {}, Plan(budget_min=config.get("budget_min"), scale=scale_said)
    for e in entries:
        n = need_of(e)
        if isinstance(n, str):
            plan.elsewhere[e["id"]] = n
        elif why := lacking(n, config.get("runtime_options") or {}):
            plan.not_testable[e["id"]] = why
        else:
            needs[e["id"]] = n
    budget = config.get("budget_min")
    if budget is None or not needs:
        plan.planned = list(needs)
    else:
        cached = cache_dir / f"{plan_key(base, entries, budget)}.json" if cache_dir else None
        power = config.get("decision_power")
        if cached and cached.exists():
            record = json.loads(cached.read_text())
            plan.planned, plan.over_budget = record["planned"], record["over_budget"]
            plan.planned_min, plan.scale = record["planned_min"], record.get("scale", plan.scale)
            plan.priced = {k: tuple(v) for k, v in (record.get("priced") or {}).items()}
            plan.undecided, plan.power = record.get("undecided") or [], record.get("decision_power")
            plan.noise_from = record.get("noise_from", "")
        else:
            left = budget * 60 - FIXED_S
            if power and noise is not None:
                from interference.steps.plan_decisions import fit_decisions  # it builds on this module

                by_id = {e["id"]: e for e in entries}
                fitted = fit_decisions(base, needs, by_id, seconds, left, power, noise)
                plan.priced, plan.undecided, plan.power = fitted.priced, fitted.undecided, power
                plan.noise_from = fitted.noise_from
            else:
                fitted = fit(base, needs, seconds, left)
            plan.planned, plan.over_budget = fitted.planned, fitted.over_budget
            plan.planned_min = fitted.planned_min + FIXED_S / 60
            if cached:  # whole or not at all: job processes of the invocation read it
                cached.parent.mkdir(parents=True, exist_ok=True)
                part = cached.with_name(f"{cached.name}.{os.getpid()}")
                part.write_text(json.dumps(plan.record()) + "\n")
                os.replace(part, cached)
    # A planned finding's runs at the factor its verdict was priced at (a cached plan's too).
    from interference.steps.plan_decisions import at_factor  # it builds on this module

    by_entry = {e["id"]: e for e in entries}

    planned = [
        at_factor(base, by_entry[i], needs[i], plan.priced[i][0]) if i in plan.priced else needs[i]
        for i in plan.planned
    ]
    out = merged(base, planned)
    for name, extra in settling.items():  # settle's extra runs on top of the plan's: the more of each
        have = out["studies"][name].get("extra_repetitions") or {}
        out["studies"][name]["extra_repetitions"] = {
            c: max(have.get(c, 0), extra.get(c, 0)) for c in {**have, **extra}
        }
    out["findings"], out["budget_min"] = config.get("findings"), budget
    out["findings_plan"] = plan.record()
    return out


def plan_lines(record: dict) -> list[str]:
    """The findings part of the plan printed before the first run."""
    if not record:
        return []
    n = sum(len(record.get(k) or ()) for k in ("planned", "over_budget", "elsewhere", "not_testable"))
    line = f"Findings: {len(record['planned'])} of {n} asked are planned"
    if record.get("budget_min") is not None:
        line += f" within the budget of {record['budget_min']:g} min (about {record['planned_min']:.0f} min by the models"
        line += f"; {record['scale']})" if record.get("scale") else ")"
    if record["over_budget"]:
        # Each one's minutes are what it would add alone to the plan: they do not add up.
        line += f"; {len(record['over_budget'])} over the budget ({', '.join(record['over_budget'])})"
    if record["elsewhere"]:
        line += f"; {len(record['elsewhere'])} need what this config cannot give ({', '.join(record['elsewhere'])})"
    if record.get("not_testable"):
        line += f"; {len(record['not_testable'])} not testable here ({', '.join(record['not_testable'])})"
    lines = [line + "."]
    from interference.steps.plan_decisions import pricing_words  # it builds on this module

    if words := pricing_words(record):
        lines.append(f"Priced: {words}.")
    return lines
