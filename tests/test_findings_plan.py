"""The findings drive the plan (findings/plan.py): each finding's cells as config keys, merged
into the config; a budget filled cheapest first, checked against a hand-worked allocation; the
plan recorded and printed, and the scorecard naming why a finding did not run."""

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, keep_reference_probe
from interference import studies
from interference.steps import config as config_module
from interference.steps import plan
from interference.steps.scorecard import plan_reasons
from interference.studies.pairs.cases import PAPERS_CONCURRENT_CASES, pair_name
from interference.studies.pairs.check_registry import CHECKS
from interference.studies.pairs.selection import PAPERS


def entry(i):
    return next(e for e in plan.catalogue() if e["id"] == i)


def test_a_pair_findings_cells_become_its_microservices_pairs_and_cases():
    # 000-1: in one container (Case 2), L, S, B each beside another kind among L, S, B, NS.
    n = plan.need_of(entry("000-1"))
    assert n.study == "pairs"
    assert n.part == {
        "microservices": ["L", "S", "B", "NS"],
        "pairs": ["L+S", "L+B", "L+NS", "S+B", "S+NS", "B+NS"],
        "cases": ["1", "2"],
    }
    # A contrast reads its two cases; the same pairing only self-pairs; no targets: the papers' six.
    assert studies.get("pairs").finding_needs("contrast", {"a": "3b", "b": "3a", "targets": ["NS"], "partners": ["NS"]}) == {
        "microservices": ["NS"], "pairs": ["NS+NS"], "cases": ["1", "3b", "3a"]}  # fmt: skip
    same = studies.get("pairs").finding_needs("contrast", {"a": "2", "b": "3a", "pairing": "same"})
    assert same["pairs"] == ["L+L", "S+S", "B+B", "NS+NS", "NR+NR", "Y+Y"]
    # The partner's effect needs the unlimited baseline too.
    assert studies.get("pairs").finding_needs("mean_ir", {"targets": ["L"], "partners": ["S"], "effect": "partner"})["cases"] == [
        "1", "1u", "2", "3a", "3b"]  # fmt: skip


def test_the_plan_runs_exactly_the_cells_each_pair_finding_reads():
    """For every pair finding of the catalogue, the cells its check reads from a table of every
    pairing in every case (the scorer's Selector.rows) are the cells its plan makes (the
    planner's needs, from the same selectors): nothing read is left unplanned, nothing planned
    is unread."""
    members = [*PAPERS, "P"]
    full = pd.DataFrame([{"host": "h", "case": c, "target": t, "partner": p, "metric": "m"}
                         for c in PAPERS_CONCURRENT_CASES for t in members for p in members])  # fmt: skip
    checked = 0
    for e in plan.catalogue():
        if e["study"] != "pairs":
            continue
        check, args = CHECKS[e["check"]], e.get("args") or {}
        need = check.needs(args)
        if isinstance(need, str):
            assert "host" in args or check.other_definition, e["id"]
            continue
        read = pd.concat([s.rows(full) for s in check.reads(args)])
        assert len(read), e["id"]
        pairs = {
            pair_name(sorted((t, p), key=members.index)) for t, p in zip(read["target"], read["partner"])
        }
        assert pairs == set(need["pairs"]), e["id"]
        assert set(read["case"]) == set(need["cases"]) - {"1", "1u"}, e["id"]
        assert set(read["target"]) | set(read["partner"]) == set(need["microservices"]), e["id"]
        checked += 1
    assert checked >= 20


def test_findings_that_one_config_cannot_give_say_why():
    assert plan.need_of(entry("004-7")).startswith("needs a second host (edge)")
    assert "another definition of the study" in plan.need_of(entry("002-8"))
    assert plan.need_of(entry("001-16")).startswith("needs a second host: run config/paper001-two-hosts.yaml")
    # Paper 003's: the study's part of config/paper003.yaml, with its runtimes.
    n = plan.need_of(entry("003-1"))
    assert (
        n.study == "pingpong"
        and n.part["runtimes"] == ["baremetal", "docker"]
        and n.part["message_sizes"][0] == 10
    )


def test_merging_unites_lists_keeps_the_configs_keys_and_its_studies_runtimes():
    base = {"runtimes": ["docker"], "studies": {"pairs": {"microservices": ["L"], "iterations": 3}}}
    out = plan.merged(base, [
        plan.Need("pairs", {"microservices": ["L", "S"], "pairs": ["L+S"], "iterations": 10}),
        plan.Need("network", {"runtimes": ["baremetal", "docker"], "iterations": 3}),
    ])  # fmt: skip
    # No `pairs` in the config: every pair of its microservices, L+S among them.
    assert out["studies"]["pairs"] == {"microservices": ["L", "S"], "iterations": 3, "runtimes": ["docker"]}
    assert out["runtimes"] == ["docker", "baremetal"] and out["studies"]["network"]["runtimes"] == [
        "baremetal",
        "docker",
    ]
    assert base == {"runtimes": ["docker"], "studies": {"pairs": {"microservices": ["L"], "iterations": 3}}}
    named = plan.merged({"studies": {"pairs": {"pairs": ["L+L"]}}}, [plan.Need("pairs", {"pairs": ["L+S"]})])
    assert named["studies"]["pairs"]["pairs"] == ["L+L", "L+S"]


def test_the_budget_is_filled_cheapest_first_against_a_hand_worked_allocation():
    """Runs as items of one study, each with its seconds: A needs a (10 s); B needs b (20 s);
    C needs a and c (12 s alone, 2 s once A is in); D needs d (9 s). Budget 30 s, base 0.
    By hand, alone: D 9, A 10, C 12, B 20. D first (total 9), then A (19); C now costs 2 (21);
    B would make 41 > 30: over the budget, by the 20 s it would add."""
    cost = {"a": 10, "b": 20, "c": 2, "d": 9}
    needs = {
        "A": plan.Need("x", {"items": ["a"]}),
        "B": plan.Need("x", {"items": ["b"]}),
        "C": plan.Need("x", {"items": ["a", "c"]}),
        "D": plan.Need("x", {"items": ["d"]}),
    }

    def seconds(cfg):
        return sum(cost[i] for i in cfg["studies"].get("x", {}).get("items", []))

    p = plan.fit({"studies": {}}, needs, seconds, 30)
    assert p.planned == ["D", "A", "C"]
    assert p.over_budget == {"B": pytest.approx(20 / 60)}
    assert p.planned_min == pytest.approx(21 / 60)


def test_an_unknown_finding_is_refused_before_anything_runs():
    cfg = {"findings": ["009-*"], "studies": {}}
    with pytest.raises(config_module.ConfigError, match=r"'009-\*' matches no finding"):
        config_module.validate(cfg, machine=False)


def test_a_config_of_findings_gets_their_runs_and_records_its_plan():
    cfg = config_module.validate(
        {"findings": ["000-7", "003-1", "004-7"], "runtimes": ["docker"], "studies": {}}, machine=False
    )
    pairs = cfg["studies"]["pairs"]
    assert pairs["microservices"] == ["L"] and pairs["pairs"] == ["L+L"] and pairs["cases"] == ["1", "2"]
    assert (
        cfg["studies"]["pingpong"]["runtimes"] == ["baremetal", "docker"] and "baremetal" in cfg["runtimes"]
    )
    record = cfg["findings_plan"]
    assert record["planned"] == ["000-7", "003-1"] and list(record["elsewhere"]) == ["004-7"]
    assert plan_reasons({"config": cfg})["004-7"][1].startswith("needs a second host")
    assert plan.plan_lines(record) == [
        "Findings: 2 of 3 asked are planned; 1 need what this config cannot give (004-7)."
    ]


def test_a_budget_plans_what_fits_on_this_host_and_says_what_does_not(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the probe and the plan's cache go under results/
    # This host as fast as the reference machine (a kept probe): the plan does not depend on
    # how loaded the machine running the test is.
    keep_reference_probe(tmp_path)
    raw = {"findings": ["000-7", "000-9"], "budget_min": 6, "runtimes": ["docker"], "studies": {
        "pairs": {"iterations": 3, "repetitions": 1, "window_s": {"2": 4, "3a": 4, "3b": 4},
                  "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
                  "sizes": {"L": {"n": 1000}, "B": {"file_size_mb": 2048, "ram_mb": 1024}}}}}  # fmt: skip
    cfg = config_module.validate(raw, machine=False)
    record = cfg["findings_plan"]
    # L+L in Case 2 is cheap; B+B in every case (Bonnie++'s 12 s iterations) is not.
    assert record["planned"] == ["000-7"] and list(record["over_budget"]) == ["000-9"]
    assert record["planned_min"] <= 6 and (tmp_path / "results/plan").is_dir()
    # 000-7's price (more runs) did not fit: it runs at the config's runs, with the power there.
    factor, power = record["priced"]["000-7"]
    assert factor == 1.0 and power < 0.8 and not cfg["studies"]["pairs"].get("extra_repetitions")
    # The factor and its source (no history here: the kept probe), in the plan's line.
    assert record["scale"].startswith("the models ×1.00 on this host: a probe of this host")
    assert f"by the models; {record['scale']})" in plan.plan_lines(record)[0]
    assert "B" not in cfg["studies"]["pairs"]["microservices"]
    verdict, reason = plan_reasons({"config": cfg})["000-9"]
    assert verdict == "not run in this config"
    assert reason.startswith("over the budget of 6 min: its runs would add about")
    # The same inputs read the same plan back (every job process of one invocation); another
    # budget is another plan.
    assert config_module.validate(raw, machine=False)["findings_plan"] == record
    wider = config_module.validate({**raw, "budget_min": 30}, machine=False)["findings_plan"]
    assert wider["planned"] == ["000-7", "000-9"] and wider["over_budget"] == {}


def test_a_budget_buys_the_runs_a_verdict_needs(tmp_path, monkeypatch):
    """000-7 (L beside L in Case 2 about the paper's -21 %, within [-30 %, -12 %]) needs more
    runs than the config's to be decided on the prior's noise: with decision_power the plan runs
    its cells that many times (extra_repetitions), says so in its line, keeps the factor in its
    cache, and without it runs the config's runs; the findings it cannot price keep theirs."""
    from interference.findings.verdict import Band
    from interference.steps import plan_decisions, verdict_price

    monkeypatch.chdir(tmp_path)
    keep_reference_probe(tmp_path)
    raw = {"findings": ["000-7", "003-1"], "budget_min": 60, "runtimes": ["docker"], "studies": {
        "pairs": {"iterations": 3, "repetitions": {"1": 3, "2": 2}, "window_s": {"2": 4, "3a": 4, "3b": 4},
                  "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"}, "sizes": {"L": {"n": 1000}}}}}  # fmt: skip
    cfg = config_module.validate(raw, machine=False)
    record = cfg["findings_plan"]
    factor, power = record["priced"]["000-7"]
    assert record["planned"] == ["000-7", "003-1"] and factor > 1 and power >= 0.8
    assert "003-1" not in record["priced"]  # another study's finding: no price, its config's runs
    assert record["noise_from"].startswith("the prior (noise-prior.tsv) for B, L, NR")
    b, r = -(-3 * factor // 1), -(-2 * factor // 1)  # ceil
    assert cfg["studies"]["pairs"]["extra_repetitions"] == {"1/L": b - 3, "2/L+L": r - 2}
    assert f"Priced: 1 finding by the runs its verdict needs at power 0.8 (000-7 ×{factor:g})" in "\n".join(
        plan.plan_lines(record)
    )
    # The factor is the least of the grid that reaches the power on this noise (the shipped prior).
    pairs = plan_decisions.pairs_part(
        {k: v for k, v in cfg.items() if k != "findings_plan"},
        plan.need_of({e["id"]: e for e in plan.catalogue()}["000-7"]),
    )
    noise = verdict_price.noise(tmp_path / "results", cfg["host"])
    smaller = [f for f in verdict_price.FACTORS if f < factor]
    paper = pd.Series({("2", "L", "L"): -0.21})
    cells = verdict_price.cells_at(paper, pairs, smaller[-1], noise)
    assert verdict_price.p_reproduced(cells, Band(-0.3, -0.12), "about") < 0.8
    # The cached plan keeps the factor although the host's noise changes (its own table now).
    own = tmp_path / "results" / verdict_price.HOST_TABLE
    own.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"host": [cfg["host"]], "runtime": ["docker"], "target": ["L"], "metric": ["gflops"], "run_var": [0.0], "iteration_var": [0.0001],
                  "df_run": [20]}).to_csv(own, sep="\t", index=False)  # fmt: skip
    again = config_module.validate(raw, machine=False)
    assert (
        again["findings_plan"] == record
        and again["studies"]["pairs"]["extra_repetitions"] == cfg["studies"]["pairs"]["extra_repetitions"]
    )
    # Runs only: the config's runs.
    runs_only = config_module.validate({**raw, "decision_power": None}, machine=False)
    assert (
        not runs_only["studies"]["pairs"].get("extra_repetitions")
        and not runs_only["findings_plan"]["priced"]
    )


def test_a_run_on_disk_costs_the_plan_nothing(tmp_path, monkeypatch):
    """After a first pass, a bigger budget must not spend its minutes again on runs already
    measured (issue 52): a run whose meta.json holds the settings it would run with is free; one
    measured with other settings (more iterations) is not."""
    monkeypatch.chdir(tmp_path)
    keep_reference_probe(tmp_path)
    raw = {"findings": ["000-7", "000-9"], "budget_min": 6, "runtimes": ["docker"], "studies": {
        "pairs": {"iterations": 3, "repetitions": 1, "window_s": {"2": 4, "3a": 4, "3b": 4},
                  "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
                  "sizes": {"L": {"n": 1000}, "B": {"file_size_mb": 2048, "ram_mb": 1024}}}}}  # fmt: skip
    everything = config_module.validate({**raw, "budget_min": None}, machine=False)
    pairs = studies.get("pairs")
    part = everything["studies"]["pairs"]
    b_runs = [r for r in pairs.runs_on(part, "docker") if "B" in r.key and not pairs.after_all(r.key)]
    assert b_runs

    def measure(runs, **changed):
        for r in runs:
            settings = {
                "host": everything["host"],
                **studies.run_settings(everything, "pairs", "docker", r.key, r.repetition),
            }
            meta = (
                tmp_path
                / f"results/raw/{everything['host']}/docker/pairs/{r.key}/rep{r.repetition}/meta.json"
            )
            meta.parent.mkdir(parents=True, exist_ok=True)
            meta.write_text(json.dumps({"settings": {**settings, **changed}}))

    done = config_module.measured_runs(tmp_path)
    seconds = lambda c, d=None: config_module.model_seconds(c, done=d)  # noqa: E731
    # Bonnie++'s runs measured with 5 iterations, not 3: still to do, 000-9 still over the budget.
    measure(b_runs, iterations=5)
    assert seconds(everything, done) == pytest.approx(seconds(everything))
    assert config_module.validate({**raw, "budget_min": 7}, machine=False)["findings_plan"]["over_budget"]
    # Measured with these settings: they cost nothing, and a new budget plans 000-9 as well.
    measure(b_runs)
    fresh = config_module.measured_runs(tmp_path)
    b_seconds = sum(
        pairs.expected_seconds(
            {
                "host": everything["host"],
                **studies.run_settings(everything, "pairs", "docker", r.key, r.repetition),
            }
        )
        for r in b_runs
    )
    assert seconds(everything, fresh) <= seconds(everything) - b_seconds
    record = config_module.validate({**raw, "budget_min": 8}, machine=False)["findings_plan"]
    assert sorted(record["planned"]) == ["000-7", "000-9"] and record["over_budget"] == {}


def test_what_this_host_lacks_makes_a_finding_not_testable_here():
    """A VM under TCG (asked for here, as on a host without usable KVM) is an emulator's speed:
    001-3 (a VM's scaling) is not planned and the scorecard says why."""
    cfg = config_module.validate(
        {"findings": ["001-1", "001-3"], "runtime_options": {"vm": {"accel": "tcg"}}, "studies": {}},
        machine=False,
    )
    record = cfg["findings_plan"]
    assert record["planned"] == ["001-1"] and list(record["not_testable"]) == ["001-3"]
    assert "vm" not in cfg["studies"]["scaling"]["runtimes"]
    verdict, reason = plan_reasons({"config": cfg})["001-3"]
    assert verdict == "not testable on this machine" and "TCG" in reason


def test_the_findings_section_says_what_the_plan_ran_and_left_out():
    from interference.rendering.findings_section import plan_sentence

    record = {"planned": ["000-7", "003-1"], "over_budget": {"000-9": 4.2}, "elsewhere": {"004-7": "x"},
              "not_testable": {"001-3": "TCG"}, "budget_min": 45, "planned_min": 38.4}  # fmt: skip
    text = plan_sentence(record)
    assert text.startswith(
        "**The plan.** The config asked for 5 findings; 2 were planned within its budget of 45 min"
    )
    assert "about 38 min by the models" in text and "1 over the budget (000-9)" in text
    assert "1 need what this machine lacks (001-3)" in text
    assert "over the budget" not in plan_sentence({**record, "over_budget": {}})
    assert plan_sentence({}) == ""
    scaled = plan_sentence({**record, "scale": "the models ×1.43 on this host: 169 earlier runs"})
    assert "(about 38 min by the models; the models ×1.43 on this host: 169 earlier runs)" in scaled
    assert "priced" not in text
    priced = {**record, "priced": {"000-7": [4.0, 0.86], "000-9": [1.0, 1.0], "000-3": [1.0, 0.0]},
              "undecided": ["000-3"], "decision_power": 0.8, "max_factor": 10.0}  # fmt: skip
    said = plan_sentence(priced)
    assert "It priced 3 findings by the runs a cell their verdict needs" in said
    assert "probability of 0.8 (000-7 at 4 times the config's runs)" in said
    noted = plan_sentence({**priced, "noise_from": "the host runs for L; the prior (noise-prior.tsv) for B"})
    assert (
        "probability of 0.8 on the noise of the host runs for L; the prior (noise-prior.tsv) for B (" in noted
    )
    assert "no factor up to 10 decides 000-3, so they came last" in said
    assert "(000-7 at 2.5 times" in plan_sentence(
        {**priced, "priced": {**priced["priced"], "000-7": [2.5, 0.8]}}
    )


def test_the_least_settings_price_the_pair_study_below_the_defaults_and_leave_the_rest():
    """scripts/plan_budgets.py --least (the floor docs/planning.md quotes): two runs every cell,
    two samples a window (or one block of phases of two iterations), no drift check; the other studies and the pair study's sizes as they
    were, and every finding's runs cheaper than at the default's settings."""
    import importlib.util
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("plan_budgets", root / "scripts/plan_budgets.py")
    budgets = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(budgets)
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    low = budgets.least(cfg)
    pairs = low["studies"]["pairs"]
    assert set(pairs["repetitions"].values()) == {2} and pairs["drift_check"] is False
    assert pairs["adaptive"] == {**cfg["studies"]["pairs"]["adaptive"], "min_overlap_samples": 2}
    phased = {
        **cfg,
        "studies": {**cfg["studies"], "pairs": {**cfg["studies"]["pairs"], "phases": {"blocks": 2}}},
    }
    assert budgets.least(phased)["studies"]["pairs"]["phases"] == {"blocks": 1, "iterations": 2}
    assert pairs["sizes"] == cfg["studies"]["pairs"]["sizes"]
    assert cfg["studies"]["pairs"]["repetitions"]["1"] == 3  # the config itself is left as it was

    def every_finding(c):
        return plan.expand({**c, "budget_min": None}, lambda x: config_module.model_seconds(x))

    full, floor = every_finding(cfg), every_finding(low)
    assert full["findings_plan"]["planned"] == floor["findings_plan"]["planned"]
    assert config_module.model_seconds(floor) < config_module.model_seconds(full)
    assert floor["studies"]["creation"] == full["studies"]["creation"]


def test_a_plan_made_once_stays_for_the_same_config_when_the_host_s_models_change(tmp_path):
    """After more runs this host's scale changes; re-planning then dropped findings whose runs
    were on disk (issue 52). The cached plan of the same config and budget is kept."""
    cfg = {"findings": ["000-*"], "budget_min": 20, "runtimes": ["docker"], "studies": {}}
    first = plan.expand(cfg, lambda c: config_module.model_seconds(c), tmp_path)["findings_plan"]
    slower = plan.expand(cfg, lambda c: 3 * config_module.model_seconds(c), tmp_path)["findings_plan"]
    fresh = plan.expand(cfg, lambda c: 3 * config_module.model_seconds(c), tmp_path / "none")["findings_plan"]
    assert first["planned"] and slower["planned"] == first["planned"]
    assert len(fresh["planned"]) < len(first["planned"])  # the models alone would have dropped some
    more = plan.expand({**cfg, "budget_min": 25}, lambda c: config_module.model_seconds(c), tmp_path)
    assert len(more["findings_plan"]["planned"]) >= len(first["planned"])  # another budget: planned again


def test_each_pair_check_is_declared_once_and_measured_once():
    from interference.studies.pairs.check_registry import measures
    from interference.studies.pairs.findings import CHECKS as SCORED

    assert SCORED is CHECKS and all(c.measure is not None for c in CHECKS.values())
    with pytest.raises(LookupError, match="no pair study check 'no_such'"):
        measures("no_such")(lambda ctx, args: None)
    with pytest.raises(ValueError, match="'mean_ir' is measured twice"):
        measures("mean_ir")(lambda ctx, args: None)


def test_after_a_pass_a_forced_rerun_and_a_new_plan_keep_every_finding_measured(tmp_path, monkeypatch):
    """The sequence a new user tried (issue 52), planned by snakemake itself (dry runs; the runs'
    meta.json and ledger written as the runner writes them, 3× slower than the models): `make
    paper`'s plan, then a rerun of one run forced, then a fresh plan (its cache gone, as with a
    new budget) while this host's history now says it is slower. The forced rerun plans that run
    alone and the same findings; the fresh plan keeps them too, the measured runs costing nothing."""
    from interference.stores import durations

    keep_reference_probe(tmp_path)
    raw = {"findings": ["000-7", "000-9"], "budget_min": 6, "runtimes": ["docker"], "studies": {
        "pairs": {"iterations": 3, "repetitions": 1, "window_s": {"2": 4, "3a": 4, "3b": 4},
                  "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
                  "sizes": {"L": {"n": 1000}, "B": {"file_size_mb": 2048, "ram_mb": 1024}}}}}  # fmt: skip
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump(raw))

    def dry(*args):
        r = subprocess.run(
            [SNAKEMAKE, "-n", "-d", str(tmp_path), "report/paper.html", "--configfile", str(tmp_path / "paper.yaml"), *args],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout + r.stderr

    first = dry()
    assert "Findings: 1 of 2 asked are planned" in first and "(000-9)" in first, first[-2000:]
    # The pass: every planned run measured, each 3× its model.
    monkeypatch.chdir(tmp_path)  # the config reads the plan's cache under results/
    cfg = config_module.validate(raw, machine=False)
    pairs = studies.get("pairs")
    for name in ["base", *cfg["studies"]["pairs"]["microservices"]]:  # the images, built before the runs
        image = tmp_path / f"results/images/{cfg['host']}/docker/{name}.json"
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_text("{}")
    metas = []
    for r in pairs.runs_on(cfg["studies"]["pairs"], "docker"):
        settings = {"host": cfg["host"], **studies.run_settings(cfg, "pairs", "docker", r.key, r.repetition)}
        meta = {"settings": settings, "started": 0.0, "finished": 3 * pairs.expected_seconds(settings)}
        path = tmp_path / f"results/raw/{cfg['host']}/docker/pairs/{r.key}/rep{r.repetition}/meta.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(meta))
        durations.record(meta, tmp_path / "results")
        metas.append((r, path))
    one = str(next(p for r, p in metas if not pairs.after_all(r.key)).relative_to(tmp_path))
    forced = dry("--forcerun", one)
    # The forced run, and the drift check's baselines that wait for every run (Study.after_all).
    ends = sum(pairs.after_all(r.key) for r, _ in metas)
    assert f"run{' ' * 23}{1 + ends}" in forced, forced[-3000:]
    assert f"Plan: {1 + ends} runs to do (pairs on docker: {1 + ends})" in forced
    assert "Findings: 1 of 2 asked are planned" in forced
    # A fresh plan on a host whose history says ×3: the measured 000-7 still fits, for free.
    shutil.rmtree(tmp_path / "results/plan")
    again = dry()
    assert "The models are scaled ×3" in again or "×3.0" in again, again[-2000:]
    assert "Findings: 1 of 2 asked are planned" in again and "Plan: no runs to do" in again, again[-2000:]


def test_make_papers_calibration_runs_are_runs_of_the_budgeted_plan_with_their_settings(
    tmp_path, monkeypatch
):
    """make paper first makes the rule calibration's runs on the config without findings or budget,
    then the budgeted report: those runs must be runs of the budgeted plan with the settings it
    gives them (snakemake would make them again otherwise), and enough for a scale from history."""
    from interference.steps.estimate import MIN_HISTORY_RUNS

    calibrate = ["calibration", "--config", "findings=[]", "budget_min="]  # the Makefile's first command
    r = subprocess.run([SNAKEMAKE, "-n", "-d", str(tmp_path), *calibrate], cwd=REPO, capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    metas = sorted(set(re.findall(r"results/raw/\S+/meta\.json", r.stdout + r.stderr)))
    assert len(metas) == MIN_HISTORY_RUNS + 1, metas
    # The plan line counts those runs, not the config's.
    assert f"Plan: {len(metas)} runs to do (pairs on docker: {len(metas)})." in r.stderr
    keep_reference_probe(tmp_path)  # the budgeted plan as a host with no history makes it
    monkeypatch.chdir(tmp_path)
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    _, budgeted = config_module.host_configs(default)
    _, calibrating = config_module.host_configs({**default, "findings": [], "budget_min": None})
    for meta in metas:
        host, runtime, study, *key, rep, _ = meta.split("/")[2:]
        key, rep = "/".join(key), int(rep.removeprefix("rep"))
        planned = {
            (r.key, r.repetition)
            for r in studies.get(study).runs_on(budgeted[host]["studies"][study], runtime)
        }
        assert (key, rep) in planned, meta
        assert studies.run_settings(budgeted[host], study, runtime, key, rep) == studies.run_settings(
            calibrating[host], study, runtime, key, rep
        ), meta
