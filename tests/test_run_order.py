"""The order runs are measured in (interference.core.run_order), how the runs followed it
(the run-facts step's run_order.tsv) and the pair study's drift check."""

from itertools import combinations

import pandas as pd
import pytest
from interference import studies
from interference.core import run_order
from interference.steps.config import ConfigError, validate
from interference.steps.order_agreement import main as order_agreement_main
from interference.steps.order_agreement import order_agreement, read_runs, run_order_table
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
    assert a["n_runs"] == len(RUNS) and abs(a["kendall_tau"] - 1) < 1e-12 and a["span_s"] == len(RUNS) - 1
    runs["started"] = 200.0 - runs["started"]  # executed backwards
    assert order_agreement(runs, {"shuffle": True, "seed": 3}, "h")["kendall_tau"] < -0.999


def by_pairs(xs, ys) -> float:
    """Kendall's tau of two orders without ties, counted pair by pair (the definition)."""
    signs = [(x1 - x2) * (y1 - y2) for (x1, y1), (x2, y2) in combinations(zip(xs, ys), 2)]
    return (sum(s > 0 for s in signs) - sum(s < 0 for s in signs)) / len(signs)


def four_runs_and_a_late_one() -> pd.DataFrame:
    """Sorted plan (no shuffle): a, b, c, d, then the late e. Executed: b, a, d, c, e."""
    keys = ["a", "b", "c", "d", "e"]
    started = [110.0, 100.0, 130.0, 120.0, 500.0]
    runs = pd.DataFrame({"host": "h", "study": "s", "runtime": "docker", "key": keys, "repetition": 1,
                         "started": started, "after_all": [False] * 4 + [True]})  # fmt: skip
    other = runs.assign(host="g", started=runs["started"][::-1].to_numpy())  # another host: its own row
    return pd.concat([runs, other], ignore_index=True)


def test_kendall_tau_of_a_small_example_by_hand():
    runs = four_runs_and_a_late_one()
    # Of the 10 pairs of h's runs, (a, b) and (c, d) swapped: (8 - 2) / 10.
    a = order_agreement(runs, {"shuffle": False, "seed": 1}, "h")
    assert a == {"n_runs": 5, "kendall_tau": pytest.approx(0.6), "span_s": 400.0}
    assert by_pairs([0, 1, 2, 3, 4], [1, 0, 3, 2, 4]) == pytest.approx(0.6)
    # Host g ran them in reverse start order: every pair is counted, against the same plan.
    g = runs[runs["host"] == "g"]
    executed = list(g["started"].rank().astype(int) - 1)
    assert order_agreement(runs, {"shuffle": False}, "g")["kendall_tau"] == pytest.approx(
        by_pairs(range(5), executed)
    )
    # A shuffled plan: the positions the plan gives, against the start times, pair by pair.
    h = runs[runs["host"] == "h"]
    ids = [("s", "docker", k, 1) for k in h["key"]]
    plan = run_order.plan(ids[:4], ids[4:], seed=5)
    assert order_agreement(runs, {"seed": 5}, "h")["kendall_tau"] == pytest.approx(
        by_pairs([plan[i] for i in ids], list(h["started"]))
    )


def test_run_order_table_has_a_row_per_host_with_the_plan(tmp_path):
    runs = four_runs_and_a_late_one()
    t = run_order_table(runs, {"shuffle": False, "seed": 4})
    assert list(t.columns) == ["host", "n_runs", "kendall_tau", "span_s", "shuffle", "seed"]
    assert list(t["host"]) == ["g", "h"] and not t["shuffle"].any() and set(t["seed"]) == {4}
    assert t.set_index("host").loc["h", "kendall_tau"] == pytest.approx(0.6)
    # Runs not started (no time recorded) are left out; no runs at all: the header only.
    unstarted = runs.assign(started=[None] * 9 + [1.0])  # only g's last
    assert run_order_table(unstarted, {}).to_dict("records") == [
        {"host": "g", "n_runs": 1, "kendall_tau": 1.0, "span_s": 0.0, "shuffle": True, "seed": 1}
    ]
    assert run_order_table(pd.DataFrame(), {}).empty
    # The step, as the rule calls it: every study's runs.tsv, one of them without runs.
    runs.to_csv(tmp_path / "runs.tsv", sep="\t", index=False)
    (tmp_path / "empty.tsv").write_text("\n")
    assert len(read_runs([tmp_path / "runs.tsv", tmp_path / "empty.tsv"])) == len(runs)
    out = tmp_path / "stats" / "run_order.tsv"
    argv = ["--runs-tables", str(tmp_path / "runs.tsv"), str(tmp_path / "empty.tsv"),
            "--order", '{"shuffle": false, "seed": 4}', "--out", str(out)]  # fmt: skip
    assert order_agreement_main(argv) == 0
    written = pd.read_csv(out, sep="\t")
    assert list(written["host"]) == ["g", "h"] and written["kendall_tau"].iloc[1] == pytest.approx(0.6)


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
