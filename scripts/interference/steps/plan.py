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
import json
import os
from collections.abc import Callable
from pathlib import Path

import yaml

from interference import REPO_ROOT, studies
from interference.core.yaml_files import load_once
from interference.steps.plan_decisions import at_factor, fit_decisions
from interference.steps.plan_fit import Need, Plan, fit, merged

__all__ = ["Need", "Plan", "fit", "merged"]  # the pieces, for the callers that plan

CATALOGUE = REPO_ROOT / "report" / "published" / "findings.yaml"
# What runs besides the runs, in a budget (steps/estimate.py's constants for them are per run; this
# is the fixed part: the base image, the images, the statistics and the report, measured here).
FIXED_S = 300.0


class PlanError(ValueError):
    """A findings pattern that matches no finding; the message names it."""


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
                fitted = fit_decisions(
                    base, needs, {e["id"]: e for e in entries}, seconds, left, power, noise
                )
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
    # A planned finding's runs at the factor its verdict was priced at (a cached plan's too), and
    # settle's extra runs on top (merged keeps the more of each cell's runs).
    by_id = {e["id"]: e for e in entries}
    planned = [
        at_factor(base, by_id[i], needs[i], plan.priced[i][0]) if i in plan.priced else needs[i]
        for i in plan.planned
    ]
    out = merged(
        base, planned + [Need(name, {"extra_repetitions": extra}) for name, extra in settling.items()]
    )
    out["findings"], out["budget_min"] = config.get("findings"), budget
    out["findings_plan"] = plan.record()
    return out


def pricing_words(record: dict) -> str:
    """How the plan priced its findings' verdicts, for the plan line ("" where it priced runs only)."""
    priced, power = record.get("priced") or {}, record.get("decision_power")
    if not priced or not power:
        return ""
    more = [f"{i} ×{f:g}" for i, (f, _) in priced.items() if f > 1 and i in record["planned"]]
    n = len(priced)
    text = f"{n} finding{'s' if n > 1 else ''} by the runs {'their' if n > 1 else 'its'} verdict needs at power {power:g} ({', '.join(more) or 'none above ×1'})"
    if record.get("undecided"):
        text += f"; {len(record['undecided'])} not decided up to ×{record['max_factor']:g}, planned last ({', '.join(record['undecided'])})"
    return text


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
    if words := pricing_words(record):
        lines.append(f"Priced: {words}.")
    return lines
