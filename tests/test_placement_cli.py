"""`make advise` and `make validate-placement` (steps/placement.py): the profiling study's tables of
one host and runtime read from results/stats, the placements ranked as advise.py ranks them, the
validation written, and a missing table or an unknown microservice named before anything else."""

import json

import pandas as pd
import pytest
from interference.steps import placement
from test_placement import limit_rows, pressure_rows, sensitivity_rows

WHERE = {"host": "h", "runtime": "docker"}


def write(stats, name, rows):
    path = stats / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([WHERE | r for r in rows]).to_csv(path, sep="\t", index=False)


@pytest.fixture
def stats(tmp_path):
    """advice_profiles of test_placement with L for A (metric gflops) and S for B (metric copy),
    and a second host's rows that must not be read."""
    sens = (
        sensitivity_rows(
            "L", {"cpu": [(1, -0.2), (2, -0.5)], "memory": [(1, -0.1), (2, -0.3)]}, ["2"], "gflops"
        )
        + sensitivity_rows("L", {"cpu": [(1, -0.1)], "memory": [(1, -0.05)]}, ["3a"], "gflops")
        + sensitivity_rows("S", {"cpu": [(1, 0.0)], "memory": [(1, 0.0)]}, metric="copy")
    )
    write(tmp_path, "profiling/sensitivity.tsv", sens)
    press = pressure_rows("L", {"cpu": 1, "memory": 1}) + pressure_rows("S", {"cpu": 1, "memory": 1})
    write(tmp_path, "profiling/pressure.tsv", press)
    write(
        tmp_path,
        "profiling/limit_effect.tsv",
        limit_rows({"L": 0.1}, "gflops") + limit_rows({"S": 0.02}, "copy"),
    )
    measured = [
        ("3a", "L", "S", "gflops", -0.07, -0.09, -0.05, 2),
        ("3a", "S", "L", "copy", 0.01, -0.01, 0.03, 2),
    ]
    cols = ["case", "target", "partner", "metric", "ir", "ir_ci_low", "ir_ci_high", "runs"]
    write(tmp_path, "pairs/interference.tsv", [dict(zip(cols, m)) for m in measured])
    return tmp_path


def test_advise_ranks_the_placements_and_writes_them(stats, capsys):
    args = ["advise", "--stats", str(stats), "--host", "h", "--services", "L", "S", "--cores", "2"]
    assert placement.main(args + ["--memory", "4g", "--memory-per-member", "1g"]) == 0
    table = pd.read_csv(stats / "placement/advice-L+S.tsv", sep="\t")
    # The totals test_placement computes by hand for A and B.
    assert list(zip(table.placement, table.limited)) == [("L | S", False), ("L | S", True), ("L+S", False),
                                                         ("L+S", True)]  # fmt: skip
    assert table.total_slowdown.tolist() == pytest.approx([-0.01, 0.05, 0.10, 0.20])
    assert table.measured_total_slowdown[0] == pytest.approx(0.07 - 0.01)
    assert "L gflops, S copy" in capsys.readouterr().out
    # On one core the limited placements need a core each: excluded, and said why.
    assert placement.main(args[:-1] + ["1", "--memory", "4g"]) == 0
    table = pd.read_csv(stats / "placement/advice-L+S.tsv", sep="\t")
    assert table[table.limited].excluded_because.notna().all() and table[~table.limited]["rank"].notna().all()


def test_validate_writes_the_rows_the_summary_and_the_failures(stats, capsys):
    assert placement.main(["validate", "--stats", str(stats), "--host", "h"]) == 0
    rows = pd.read_csv(stats / "placement/validation.tsv", sep="\t")
    assert set(zip(rows.case.astype(str), rows.target)) == {("3a", "L"), ("3a", "S")}
    assert (stats / "placement/validation_summary.tsv").exists() and (
        stats / "placement/failures.tsv"
    ).exists()
    assert (stats / "placement/validation.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Another session's measurement of the same pairs: scored as the replicate.
    again = stats.parent / "again"
    write(
        again,
        "pairs/interference.tsv",
        pd.read_csv(stats / "pairs/interference.tsv", sep="\t").assign(ir=0.0).to_dict("records"),
    )
    assert placement.main(["validate", "--stats", str(stats), "--host", "h", "--replicate", str(again)]) == 0
    summary = pd.read_csv(stats / "placement/validation_summary.tsv", sep="\t")
    floor = summary[
        (summary.scope == "all") & (summary.predictor == "replicate") & (summary.measure == "mae_pp")
    ]
    assert floor.value.tolist() == pytest.approx([(7 + 1) / 2])  # |-0.07 - 0|, |0.01 - 0| in points
    assert (
        placement.main(
            ["validate", "--stats", str(stats), "--host", "h", "--replicate", str(stats.parent / "none")]
        )
        == 2
    )


def test_bad_input_is_named(stats, tmp_path, capsys):
    assert placement.main(["advise", "--stats", str(stats), "--host", "h", "--services", "L", "ZZ"]) == 2
    assert "unknown microservice(s) ['ZZ']" in capsys.readouterr().err
    assert placement.main(["advise", "--stats", str(stats), "--host", "other", "--services", "L", "S"]) == 2
    assert "no rows of host 'other'" in capsys.readouterr().err
    empty = tmp_path / "empty"
    assert placement.main(["validate", "--stats", str(empty), "--host", "h"]) == 2
    assert "sensitivity.tsv is missing: run the profiling study first" in capsys.readouterr().err
    assert placement.main(["advise", "--stats", str(stats), "--services", "L", "S", "--memory", "lots"]) == 2


def test_the_report_says_the_validation_from_its_tables_and_the_goal_verdict(stats):
    from interference.rendering.document import Document
    from interference.studies.profiling.section import Profiling, Validation, goal_verdict

    assert Validation(Document(stats)).blocks() == []  # nothing validated: nothing said
    assert placement.main(["validate", "--stats", str(stats), "--host", "h"]) == 0
    blocks = Validation(Document(stats)).blocks()
    text = blocks[0].content
    summary = pd.read_csv(stats / "placement/validation_summary.tsv", sep="\t")
    mae = summary[(summary.scope == "all") & (summary.predictor == "profile") & (summary.measure == "mae_pp")]
    assert f"mean absolute error {mae.value.iloc[0]:.1f} IR points" in text
    assert "against the 2 measured IRs of 2 (case, target, partner) units" in text
    assert "**is not met**" in text and "figure" in blocks[1].extra
    # The profiling section says it only when this report's config has the pair study too.
    assert Profiling(Document(stats, studies="profiling")).validation() == []
    assert Profiling(Document(stats, studies="pairs,profiling")).validation()[0].content == text
    # The verdict from the summary's numbers: all met, then one missed.
    rows = [("profile", "mae_pp", 3.0, 2.0, 4.0), ("profile", "sign_accuracy", 0.95, 0.9, 1.0),
            ("profile", "mae_difference_vs_zero_pp", -4.0, -6.0, -1.0),
            ("profile", "mae_difference_vs_case_mean_loo_pp", -2.0, -3.0, -0.5)]  # fmt: skip
    good = pd.DataFrame(rows, columns=["predictor", "measure", "value", "ci_low", "ci_high"])
    assert goal_verdict(good) == (True, [])
    worse = good.assign(ci_high=[4.0, 1.0, -1.0, 0.5])
    assert goal_verdict(worse) == (False, ["not shown better than the case's mean IR left one out"])


def samples_of(runs) -> pd.DataFrame:
    """samples.tsv rows: (case, target, partner, repetition, metric, value)."""
    return pd.DataFrame(
        [
            WHERE
            | {
                "case": c,
                "target": t,
                "partner": p,
                "repetition": r,
                "metric": k,
                "value": v,
                "higher_is_better": True,
                "in_overlap": True,
                "status": "ok",
            }
            for c, t, p, r, k, v in runs
        ]  # fmt: skip
    )


BASELINES = [("1", "L", "", 1, "gflops", 10.0), ("1", "S", "", 1, "copy", 100.0)]
# Four runs each. Apart (3a, ranked first): totals 0.1 + 0 (runs 1, 3) and 0.05 - 0.01 (2, 4);
# together (2, ranked third): 0.3 + 0.05 and 0.2 + 0.01.
APART = [("3a", "L", "S", r, "gflops", 9.0 if r % 2 else 9.5) for r in (1, 2, 3, 4)] + [
         ("3a", "S", "L", r, "copy", 100.0 if r % 2 else 101.0) for r in (1, 2, 3, 4)]  # fmt: skip
TOGETHER = [("2", "L", "S", r, "gflops", 7.0 if r % 2 else 8.0) for r in (1, 2, 3, 4)] + [
            ("2", "S", "L", r, "copy", 95.0 if r % 2 else 99.0) for r in (1, 2, 3, 4)]  # fmt: skip


def test_check_compares_the_recommended_and_the_worst_measured_placement_and_the_report_says_it(
    stats, capsys
):
    from interference.rendering.document import Document
    from interference.studies.profiling.section import Validation, advice_check_text
    from scipy import stats as scipy_stats

    path = stats.parent / "samples.tsv"
    samples_of(BASELINES + APART + TOGETHER).to_csv(path, sep="\t", index=False)
    args = ["check", "--stats", str(stats), "--samples", str(path), "--host", "h", "--services", "L", "S",
            "--cores", "2", "--memory", "4g"]  # fmt: skip
    assert placement.main(args) == 0
    out = pd.read_csv(stats / "placement/advice-check-L+S.tsv", sep="\t")
    assert list(out.placement[:2]) == ["L | S", "L+S"] and list(out.runs[:2]) == [4, 4]
    assert out.measured_total[:2].tolist() == pytest.approx([0.07, 0.28])
    welch = scipy_stats.ttest_ind([0.1, 0.04] * 2, [0.35, 0.21] * 2, equal_var=False).confidence_interval(
        0.95
    )
    assert (out.difference_low[2], out.difference_high[2]) == (
        pytest.approx(welch.low),
        pytest.approx(welch.high),
    )
    verdict = "matches" if welch.high < 0 else "undecided"
    assert out.verdict[2] == verdict
    checks = Validation(Document(stats)).advice_checks()
    assert [name for name, _ in checks] == ["L+S"] and "L | S (rank 1" in advice_check_text(checks[0][1])
    # The text follows the table: another verdict, other words.
    flipped = out.assign(verdict=["", "", "reversed"])
    assert "is the reverse" in advice_check_text(flipped) and "is the reverse" not in advice_check_text(out)
    # Only one placement measured: nothing to check, and said so.
    samples_of(BASELINES + APART).to_csv(path, sep="\t", index=False)
    assert placement.main(args) == 0 and "nothing to check" in capsys.readouterr().out
    assert (stats / "placement/advice-check-L+S.tsv").read_text().count("\n") == 1  # the header only
    ((name, table),) = Validation(Document(stats)).advice_checks()
    assert "The advice for L, S could not be checked" in advice_check_text(table, name)


def test_validate_the_cpu_share_model_from_a_quota_sweep_against_a_replicate(stats, capsys):
    # L: 2 threads, demand 2 cores; S: 1 thread, demand 1. A speed curve each (1u = 1 at 2 cores).
    rows = []
    for ms, metric, demand, threads, case1, points in (
        ("L", "gflops", 2.0, 2, 0.5, {0.5: 0.25, 1: 0.5, 1.5: 0.75}),
        ("S", "copy", 1.0, 1, 1.0, {0.5: 0.5, 1: 1.0, 1.5: 1.0}),
    ):
        common = dict(microservice=ms, metric=metric, cpu_cores=demand, threads=threads, runs=1,
                      ci_level="iterations", reason="")  # fmt: skip
        rows.append(common | dict(case="1u", cores=2, speed=1.0, ci_low=1.0, ci_high=1.0))
        rows.append(common | dict(case="1", cores=None, speed=case1, ci_low=case1, ci_high=case1))
        rows += [common | dict(case="1q", cores=c, speed=v, ci_low=v, ci_high=v) for c, v in points.items()]
    profiles = stats.parent / "sweep"
    write(profiles, "profiling/cpu_speed.tsv", rows)
    again = stats.parent / "again"
    measured = pd.read_csv(stats / "pairs/interference.tsv", sep="\t").assign(higher_is_better=True)
    write(stats, "pairs/interference.tsv", measured.to_dict("records"))
    write(again, "pairs/interference.tsv", measured.assign(ir=[-0.01, 0.0]).to_dict("records"))
    args = ["validate", "--model", "cpu-shares", "--stats", str(stats), "--host", "h", "--cores", "2"]
    assert placement.main(args + ["--profiles", str(profiles), "--replicate", str(again)]) == 0
    rows = pd.read_csv(stats / "placement/validation-cpu-shares.tsv", sep="\t").set_index("target")
    # 3a on 2 cores: a container a core; L held to 1 core (speed 0.5, as its Case 1: IR 0), S has all
    # it wants (speed 1 against Case 1's 1: IR 0).
    assert rows.ir_predicted.tolist() == pytest.approx([0.0, 0.0])
    summary = pd.read_csv(stats / "placement/validation_summary-cpu-shares.tsv", sep="\t")
    at = summary[summary.scope == "all"].set_index(["predictor", "measure"]).value
    assert at["cpu_shares", "mae_pp"] == pytest.approx((7 + 1) / 2)
    assert at["replicate", "mae_pp"] == pytest.approx((6 + 1) / 2)
    assert at["cpu_shares", "mae_ratio_vs_replicate"] == pytest.approx(4 / 3.5)
    assert (stats / "placement/validation-cpu-shares.png").exists()
    judged = pd.read_csv(stats / "placement/advice_score-cpu-shares.tsv", sep="\t")
    assert set(judged.predictor) == {"cpu_shares", "replicate", "one_line_rule"}
    # Advice by the model, with its validation's error in the intervals and the chance of being best.
    advice = ["advise", "--model", "cpu-shares", "--stats", str(stats), "--host", "h", "--profiles", str(profiles),
              "--services", "L", "S", "--cores", "2"]  # fmt: skip
    assert placement.main(advice + ["--model-error", "auto"]) == 0
    assert (
        "the model's error: 5.0 IR points a member (root mean square over 2 validated IRs"
        in capsys.readouterr().out
    )
    table = pd.read_csv(stats / "placement/advice-cpu-shares-L+S.tsv", sep="\t")
    assert table["p_best"].sum() == pytest.approx(1) and table["rank"].notna().all()
    assert placement.main(advice + ["--model-error", "lots"]) == 2
    assert "--model-error 'lots': IR points" in capsys.readouterr().err
    # Corrected by the other session's residuals: its layouts are L's and S's own units only, and a
    # target's own pairs are held out, so nothing is learnt and the rows say so.
    assert placement.main(args + ["--profiles", str(profiles), "--correct-from", str(again)]) == 0
    fixed = pd.read_csv(stats / "placement/validation-cpu-shares-corrected.tsv", sep="\t")
    assert fixed.ir_predicted.tolist() == pytest.approx([0.0, 0.0])
    assert fixed.reason.str.contains("not corrected").all()
    # Without a sweep: named, before anything is read.
    assert placement.main(["validate", "--model", "cpu-shares", "--stats", str(stats), "--host", "h"]) == 2
    assert "cpu_speed.tsv is missing: run the quota sweep first" in capsys.readouterr().err


def test_the_busy_model_reads_the_busy_sweep_and_names_it_when_missing(stats, capsys):
    # L: 2 threads wanting 2 cores, slow among busy neighbours (0.3 at one core) though a quota of one
    # core costs it nothing beyond Case 1; S: 1 thread wanting 1 core.
    rows = []
    for ms, metric, demand, threads, busy_at_1 in (("L", "gflops", 2.0, 2, 0.3), ("S", "copy", 1.0, 1, 1.0)):
        common = dict(microservice=ms, metric=metric, cpu_cores=demand, threads=threads, runs=1,
                      ci_level="iterations", reason="")  # fmt: skip
        rows.append(common | dict(case="1u", cores=2, speed=1.0, ci_low=1.0, ci_high=1.0))
        rows.append(common | dict(case="1", cores=None, speed=0.5, ci_low=0.5, ci_high=0.5))
        rows.append(common | dict(case="1q", cores=1, speed=0.5, ci_low=0.5, ci_high=0.5))
        rows.append(
            common | dict(case="1k", busy=1, cores=1, speed=busy_at_1, ci_low=busy_at_1, ci_high=busy_at_1)
        )
    profiles = stats.parent / "busy"
    measured = pd.read_csv(stats / "pairs/interference.tsv", sep="\t").assign(higher_is_better=True)
    write(stats, "pairs/interference.tsv", measured.to_dict("records"))
    write(profiles, "profiling/cpu_speed.tsv", [r for r in rows if r["case"] != "1k"])
    args = ["validate", "--model", "cpu-busy", "--stats", str(stats), "--host", "h", "--cores", "2",
            "--profiles", str(profiles)]  # fmt: skip
    assert placement.main(args) == 2
    assert "has no busy sweep (studies.profiling.busy)" in capsys.readouterr().err
    write(profiles, "profiling/cpu_speed.tsv", rows)
    assert placement.main(args) == 0
    got = pd.read_csv(stats / "placement/validation-cpu-busy.tsv", sep="\t").set_index("target")
    # 3a on 2 cores: a core each. L at one core among busy neighbours: 0.3 against Case 1's 0.5 (IR
    # -0.4); the quota sweep would have said 0.5 (IR 0). S has all it wants: as alone, IR 1/0.5 - 1.
    assert got.loc["L", "ir_predicted"] == pytest.approx(0.3 / 0.5 - 1)
    assert got.loc["S", "ir_predicted"] == pytest.approx(1 / 0.5 - 1)
    # A second session of profiles where L ran at 0.48 among busy neighbours: the two pooled (their
    # intervals are points here, so their geometric mean), L's IR from sqrt(0.3 * 0.48).
    other = stats.parent / "busy-2"
    write(other, "profiling/cpu_speed.tsv", [r | {"speed": 0.48, "ci_low": 0.48, "ci_high": 0.48}
                                             if r["case"] == "1k" and r["microservice"] == "L" else r
                                             for r in rows])  # fmt: skip
    assert placement.main(args + [str(other)]) == 0
    got = pd.read_csv(stats / "placement/validation-cpu-busy.tsv", sep="\t").set_index("target")
    assert got.loc["L", "ir_predicted"] == pytest.approx((0.3 * 0.48) ** 0.5 / 0.5 - 1)
    # The bubble model reads one session: several are refused, naming the models that pool them.
    bubble = ["validate", "--stats", str(stats), "--host", "h", "--profiles", str(profiles), str(other)]
    assert placement.main(bubble) == 2
    assert "pooled for the CPU-share models" in capsys.readouterr().err


def test_a_replicate_drawn_in_the_same_run_order_is_said(stats, tmp_path, capsys):
    again = tmp_path / "again"
    measured = pd.read_csv(stats / "pairs/interference.tsv", sep="\t")
    write(again, "pairs/interference.tsv", measured.assign(ir=[-0.01, 0.0]).to_dict("records"))

    def session(where, order, studies=("pairs",)):
        config = {"run_order": order, "runtimes": ["docker"], "studies": {s: {} for s in studies}}
        (where / "environment.json").write_text(json.dumps({"config": config}))

    args = ["validate", "--stats", str(stats), "--host", "h", "--replicate", str(again)]
    # The schema's defaults (shuffle, seed 1) in one, written out in the other: the same order.
    session(stats, {})
    session(again, {"shuffle": True, "seed": 1})
    assert placement.main(args) == 0
    assert "the replicate ran its runs in the same random order (seed 1)" in capsys.readouterr().err
    session(again, {"seed": 2})
    assert placement.main(args) == 0
    assert "same random order" not in capsys.readouterr().err
    # The same seed over another set of runs (another study beside) draws another order.
    session(again, {"seed": 1}, studies=("pairs", "profiling"))
    assert placement.main(args) == 0
    assert "same random order" not in capsys.readouterr().err
    # Unrecorded (an old tree without environment.json): nothing is claimed.
    (again / "environment.json").unlink()
    assert placement.main(args) == 0
    assert "run order" not in capsys.readouterr().err
    session(stats, {"shuffle": False})
    session(again, {"shuffle": False, "seed": 7})
    assert placement.main(args) == 0
    assert "same sorted order" in capsys.readouterr().err


def test_the_printed_advice_has_whole_ranks_three_decimals_and_no_negative_zero():
    table = pd.DataFrame({"rank": [1.0, None], "p_best": [-0.0, 1 / 3], "placement": ["A | B", "A+B"]})
    text = placement.readable(table).to_string(index=False, na_rep="–")
    assert text.split("\n")[1].split() == ["1", "0.000", "A", "|", "B"], text
    assert "0.333" in text and "-0" not in text and "NA" not in text and "None" not in text
    assert table["p_best"].iloc[1] == 1 / 3  # the table itself keeps every digit
