"""A budget that buys decisions (config decision_power): each pair-study finding whose paper gives
its cells priced by the runs its verdict needs (steps/verdict_price.py), and the plan fitted
decisions first (docs/planning.md#the-price-of-a-verdict-a-budget-buys-decisions). Builds on
steps/plan_fit.py's needs, merge and fit."""

from __future__ import annotations

import copy

from interference import studies
from interference.findings.verdict import Band
from interference.steps import verdict_price
from interference.steps.plan_fit import Need, Plan, fit, merged


def pairs_part(base: dict, need: Need) -> dict:
    """The pair study's part of the config with the need, its absent keys at their defaults."""
    part = merged(base, [need])["studies"]["pairs"]
    props = studies.get("pairs").config_schema().get("properties", {})
    return {**{k: copy.deepcopy(p["default"]) for k, p in props.items() if "default" in p}, **part}


def priced(
    base: dict, entry: dict, need: Need, power: float, noise: verdict_price.Noise
) -> verdict_price.Price | None:
    """The runs factor a pair finding's verdict needs (verdict_price.price) for the config with
    its need; None where nothing prices it (not a mean IR over the paper's cells)."""
    from interference.studies.pairs import PUBLISHED_DIR
    from interference.studies.pairs.findings.paper_values import published_cells

    if need.study != "pairs" or entry["check"] != "mean_ir":
        return None
    paper = published_cells(PUBLISHED_DIR, entry.get("args") or {})
    part = pairs_part(base, need)
    return verdict_price.price(paper, Band.of(entry["expect"]), entry["quantifier"], part, noise, power)


def at_factor(base: dict, entry: dict, need: Need, factor: float) -> Need:
    """The need with its cells' runs `factor` times the config's (extra_repetitions), the
    baselines of the finding's targets only (the partners' do not enter its IRs)."""
    if factor <= 1:
        return need
    part = pairs_part(base, need)
    targets = (entry.get("args") or {}).get("targets")
    extra = verdict_price.extra_repetitions(need.part, factor, part, targets)
    return Need(need.study, {**need.part, "extra_repetitions": extra}) if extra else need


def fit_decisions(
    base: dict,
    needs: dict[str, Need],
    entries: dict[str, dict],
    seconds,
    budget_s: float,
    power: float,
    noise,
) -> Plan:
    """Each finding priced by the runs its verdict needs (at_factor), taken cheapest first with
    those nothing prices (at the config's runs: another study's, a contrast); then, with what is
    left, the others at the config's runs (those no factor decides, and those whose price did not
    fit), cheapest first: the budget buys decisions first, and chances with what remains."""
    prices = {i: priced(base, entries[i], n, power, noise) for i, n in needs.items()}
    first = {
        i: at_factor(base, entries[i], n, p.factor) if p else n
        for i, n in needs.items()
        if (p := prices[i]) is None or p.decides
    }
    plan = Plan(power=power, noise_from=verdict_price.sources(noise))
    plan.undecided = [i for i, p in prices.items() if p and not p.decides]
    step = fit(base, first, seconds, budget_s)
    chosen = [first[i] for i in step.planned]
    rest = {i: n for i, n in needs.items() if i not in step.planned and prices[i] is not None}
    again = fit(merged(base, chosen), rest, seconds, budget_s) if rest else Plan(planned_min=step.planned_min)
    plan.planned = step.planned + again.planned
    plan.over_budget = {
        i: m for i, m in {**step.over_budget, **again.over_budget}.items() if i not in plan.planned
    }
    # The factor each finding runs at and its power there: its price where it was bought at it,
    # else the config's runs.
    plan.priced = {
        i: (p.factor, p.power) if i in step.planned else (1.0, p.power_at_one) for i, p in prices.items() if p
    }
    plan.planned_min = again.planned_min
    return plan
