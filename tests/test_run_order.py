"""The order runs are measured in (interference.core.run_order) and the pair study's drift check."""

import pandas as pd
import pytest
from interference import studies
from interference.core import run_order
from interference.report.environment import order_agreement
from interference.steps.config import ConfigError, validate
from interference.studies.pairs.statistics import drift

RUNS = [
    ("pairs", rt, f"case{c}/L", rep) for rt in ("docker", "podman") for c in ("1", "3a") for rep in (1, 2)
]


def test_plan_is_a_seeded_permutation_with_the_late_runs_last():
    late = [("pairs", "docker", "case1-end/L", 1)]
    a = run_order.plan(RUNS, late, seed=7)
    assert a == run_order.plan(list(reversed(RUNS)), late, seed=7)  # the set decides, not its order
    assert sorted(a.values()) == list(range(len(RUNS) + 1)) and a[late[0]] == len(RUNS)
    assert run_order.plan(RUNS, late, seed=8) != a
    ordered = sorted(a, key=a.get)[:-1]
    assert ordered != sorted(RUNS)  # shuffled: repetitions and runtimes interleave
    assert sorted(run_order.plan(RUNS, shuffle=False), key=run_order.plan(RUNS, shuffle=False).get) == sorted(
        RUNS
    )


def test_agreement_of_executed_and_planned_order():
    planned = run_order.plan(RUNS, seed=3)
    rows = [dict(zip(("study", "runtime", "key", "repetition"), r), host="h", started=100.0 + planned[r])
            for r in RUNS]  # fmt: skip
    runs = pd.DataFrame(rows)
    a = order_agreement(runs, {"shuffle": True, "seed": 3}, "h")
    assert a["n"] == len(RUNS) and abs(a["kendall_tau"] - 1) < 1e-12 and a["span_s"] == len(RUNS) - 1
    runs["started"] = 200.0 - runs["started"]  # executed backwards
    assert order_agreement(runs, {"shuffle": True, "seed": 3}, "h")["kendall_tau"] < -0.999


def test_run_order_is_config_with_defaults_and_checked():
    cfg = validate({"studies": {"pairs": {"microservices": ["L"]}}})
    assert cfg["run_order"] == {"shuffle": True, "seed": 1}
    with pytest.raises(ConfigError, match=r"run_order\.seed has the bad value -1"):
        validate({"studies": {"pairs": {"microservices": ["L"]}}, "run_order": {"seed": -1}})


def test_drift_check_adds_one_late_case1_run_per_microservice():
    cfg = validate(
        {"studies": {"pairs": {"microservices": ["L", "S"], "cases": ["1", "3a"], "drift_check": True}}}
    )
    pairs = studies.get("pairs")
    keys = [r.key for r in pairs.runs(cfg["studies"]["pairs"])]
    assert keys[-2:] == ["case1-end/L", "case1-end/S"] and "case1/L" in keys
    assert [k for k in keys if pairs.after_all(k)] == ["case1-end/L", "case1-end/S"]
    first = pairs.settings(cfg["studies"]["pairs"], "case1/L")
    end = pairs.settings(cfg["studies"]["pairs"], "case1-end/L")
    assert end == {**first, "at_end": True}  # the same measurement, marked
    off = validate({"studies": {"pairs": {"microservices": ["L"], "cases": ["1"]}}})
    assert not any(pairs.after_all(r.key) for r in pairs.runs(off["studies"]["pairs"]))


def samples(case, values, start):
    return pd.DataFrame(
        {"host": "h", "runtime": "docker", "case": case, "target": "L", "partner": "", "repetition": 1,
         "member": "member1", "iteration": range(len(values)), "metric": "gflops", "value": values,
         "unit": "GFLOPS", "higher_is_better": True, "start": [start + i for i in range(len(values))],
         "end": [start + i + 0.5 for i in range(len(values))], "in_overlap": True, "status": "ok"}
    )  # fmt: skip


def test_drift_is_the_change_of_the_baseline_with_its_ci():
    first = samples("1", [10.0, 10.2, 9.8, 10.1, 9.9, 10.0], 0).assign(steal_cores=0.01)
    end = samples("1-end", [9.0, 9.2, 8.8, 9.1, 8.9, 9.0], 7200).assign(steal_cores=0.3)
    other = samples("3a", [5.0, 5.1], 100).assign(partner="S")
    d = drift.drift(pd.concat([first, end, other]))
    assert len(d) == 1
    row = d.iloc[0]
    assert abs(row["change"] - (-0.1)) < 1e-9 and row["change_ci_high"] < 0  # 10 % worse, CI below 0
    assert abs(row["hours_between"] - 2.0) < 1e-9 and row["first_n"] == 6 and row["end_n"] == 6
    assert row["first_steal_cores"] == 0.01 and row["end_steal_cores"] == 0.3  # the hypervisor's share
    assert set(drift.without_end(pd.concat([first, end, other]))["case"]) == {"1", "3a"}
    assert drift.drift(pd.concat([first, other])).empty
