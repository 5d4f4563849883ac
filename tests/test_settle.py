"""Settling open findings (findings/settle.py): which findings are open for imprecision, the extra
runs of their cells by hand, the budget's choice, the extra repetitions a config then runs, and
the plan of findings unchanged by them."""

import math

import pandas as pd
import pytest
import yaml
from conftest import keep_reference_probe
from interference.steps import config as config_module
from interference.steps import plan, settle
from interference.studies.pairs import cases


def entry(i):
    return next(e for e in plan.catalogue() if e["id"] == i)


PAIRS = {
    "microservices": ["L", "S"],
    "cases": ["1", "2", "3a"],
    "repetitions": {"1": 3, "2": 2, "3a": 2},
}


def test_only_findings_open_for_imprecision_are_taken():
    f = pd.DataFrame(
        [
            ("000-7", "pairs", "inconclusive", 2.4),  # taken
            ("000-8", "pairs", "inconclusive", float("nan")),  # cells disagree: no factor
            ("002-4", "pairs", "inconclusive", 250.0),  # on the edge: not practical
            ("003-1", "pingpong", "inconclusive", 2.0),  # another study's runs
            ("000-1", "pairs", "reproduced", 2.0),
        ],
        columns=["id", "study", "verdict", "settle_factor"],
    )
    assert list(settle.open_findings(f)["id"]) == ["000-7"]


def test_the_extra_runs_of_a_findings_cells_by_hand():
    # 000-7 reads L beside L in Case 2 and L's Case 1 baseline. F = 2.4: Case 1 from 3 runs to
    # ceil(7.2) = 8 (5 more), Case 2 from 2 to ceil(4.8) = 5 (3 more).
    assert settle.extra_runs(entry("000-7"), 2.4, PAIRS) == {"1/L": 5, "2/L+L": 3}
    # A pair this config does not run gets none.
    assert settle.extra_runs(entry("000-7"), 2.4, PAIRS | {"pairs": ["L+S"]}) == {"1/L": 5}


def test_a_config_runs_the_extra_repetitions_after_its_own():
    runs = cases.runs(
        PAIRS | {"runtimes": ["docker"], "extra_repetitions": {"2/S+L": 2, "1/L": 1, "3b/L+S": 1}}
    )
    extra = [(r["case"], r["pair"], r["repetition"]) for r in runs][-3:]
    # S+L is the config's L+S; Case 3b is not in this config: nothing.
    assert extra == [("2", "L+S", 3), ("2", "L+S", 4), ("1", "L", 4)]


def test_the_plan_of_findings_ignores_the_extra_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # This host as fast as the reference machine (a kept probe): the plan must not depend on how
    # busy the machine is while the tests run (a slow probe left 000-7 over the budget).
    keep_reference_probe(tmp_path)
    raw = {"findings": ["000-7"], "budget_min": 20, "studies": {"pairs": {
        "iterations": 3, "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"}}}}  # fmt: skip
    before = config_module.validate(raw, machine=False)
    raw["studies"]["pairs"]["extra_repetitions"] = {"2/L+L": 30}
    after = config_module.validate(raw, machine=False)
    assert after["findings_plan"] == before["findings_plan"]
    # The plan's own extra runs (000-7 priced by the runs its verdict needs) stay; settle's add
    # to them, the more of the two a cell.
    planned = before["studies"]["pairs"].get("extra_repetitions") or {}
    assert after["studies"]["pairs"]["extra_repetitions"] == planned | {
        "2/L+L": max(30, planned.get("2/L+L", 0))
    }


def test_settle_plans_the_cheapest_open_findings_within_the_budget(tmp_path, monkeypatch):
    """Two open findings: 000-7 (L beside L, Case 2) and 002-17 (B beside B, every case: Bonnie++'s
    12 s iterations). With a budget for one, the cheap one is planned and the overlay holds
    exactly its cells; the plan's lines name it."""
    monkeypatch.chdir(tmp_path)
    keep_reference_probe(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"studies": {"pairs": {
        "microservices": ["L", "B"], "pairs": ["L+L", "B+B"], "cases": ["1", "2", "3a", "3b"],
        "repetitions": {"1": 2, "2": 2, "3a": 2, "3b": 2}, "iterations": 3,
        "window_s": {"2": 4, "3a": 4, "3b": 4}, "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
        "sizes": {"L": {"n": 1000}, "B": {"file_size_mb": 2048, "ram_mb": 1024}}}}}))  # fmt: skip
    findings = pd.DataFrame(
        [("000-7", "pairs", "inconclusive", 2.0), ("002-17", "pairs", "inconclusive", 2.0)],
        columns=["id", "study", "verdict", "settle_factor"],
    )
    overlay, chosen = settle.plan_settle(cfg, findings, budget_min=2)
    assert chosen.planned == ["000-7"] and list(chosen.over_budget) == ["002-17"]
    assert overlay == {"studies": {"pairs": {"extra_repetitions": {"1/L": 2, "2/L+L": 2}}}}
    lines = settle.plan_lines(chosen, 2, 2, overlay)
    assert lines[0].startswith(
        "Settle: 2 findings are inconclusive for imprecision; 1 planned within 2 min (4 more runs"
    )
    assert "expected to settle: 000-7" in lines[0] and lines[1] == "Over the budget: 002-17."


def test_settle_after_a_plan_that_bought_runs_adds_to_the_runs_made(tmp_path, monkeypatch):
    """A config of findings whose plan bought 000-7 more runs (extra_repetitions, issue 52 item
    7): settle's factor is of the runs made, its overlay holds only its own cells (the plan's stay
    as the plan makes them), and it counts only the runs it adds."""
    monkeypatch.chdir(tmp_path)
    keep_reference_probe(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"findings": ["000-7"], "budget_min": 60, "studies": {"pairs": {
        "repetitions": {"1": 3, "2": 2}, "iterations": 3, "window_s": {"2": 4, "3a": 4, "3b": 4},
        "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"}, "sizes": {"L": {"n": 1000}}}}}))  # fmt: skip
    made = config_module.load(cfg)["studies"]["pairs"]["extra_repetitions"]
    assert set(made) == {"1/L", "2/L+L"}  # the plan bought them
    findings = pd.DataFrame(
        [("000-7", "pairs", "inconclusive", 1.5)], columns=["id", "study", "verdict", "settle_factor"]
    )
    overlay, chosen = settle.plan_settle(cfg, findings, budget_min=30)
    want = {c: math.ceil((base + made[c]) * 1.5 - 1e-9) - base for c, base in (("1/L", 3), ("2/L+L", 2))}
    assert chosen.planned == ["000-7"] and overlay == {"studies": {"pairs": {"extra_repetitions": want}}}
    assert settle.more_runs(overlay, cfg) == sum(want[c] - made[c] for c in want)
    # Nothing open: no overlay at all (nothing is written or run).
    assert settle.plan_settle(cfg, findings.assign(verdict="reproduced"), budget_min=30)[0] == {}


def test_decided_counts_the_planned_findings_the_new_scorecard_decides():
    after = pd.DataFrame({"id": ["a", "b", "c"], "verdict": ["reproduced", "inconclusive", "not reproduced"]})
    assert settle.decided(after, ["a", "b"]) == ["a"]


@pytest.mark.parametrize("factor", [1.0, 1.1])
def test_no_extra_run_where_the_runs_already_suffice(factor):
    # ceil(2 × 1.1) = 3: one more in Case 2; ceil(3 × 1.1) = 4: one more in Case 1; F = 1: none.
    got = settle.extra_runs(entry("000-7"), factor, PAIRS)
    assert got == ({} if factor == 1.0 else {"1/L": 1, "2/L+L": 1})
