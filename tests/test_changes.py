"""Sessions and changes: a saved session read back whole or refused, the verdict rule, a
changed cell found with its sign and an unchanged one never called changed, another study
definition refused (or stated), the regression check's exit code, and the report's Changes
section computed from the tables."""

import json
import math
import shutil
import tarfile

import numpy as np
import pandas as pd
import pytest
from interference.rendering import changes_section
from interference.rendering.document import Document
from interference.stats.descriptive import describe
from interference.steps import changes
from interference.stores import sessions, tarballs

GROUP = ["host", "runtime", "instances", "metric"]
CONFIG = {
    "host": "h1",
    "runtime_options": {},
    "studies": {"scaling": {"runtimes": ["docker"], "iterations": 10}},
}


def samples(seed: int, slow: float = 1.0, runs: int = 3) -> pd.DataFrame:
    """Two cells of execution times (lower is better), 12 iterations over `runs` runs; the N=2
    cell slowed by `slow`."""
    rng = np.random.default_rng(seed)
    rows = []
    for n, mean in ((1, 10.0), (2, 20.0)):
        for i in range(12):
            value = rng.normal(mean, 0.2) * (slow if n == 2 else 1.0)
            rep = 1 + i * runs // 12
            rows.append(dict(host="h1", runtime="docker", instances=n, repetition=rep, instance=1, iteration=i,
                             metric="execution_time", value=value, unit="s", higher_is_better=False,
                             start=0, end=1, status="ok"))  # fmt: skip
    return pd.DataFrame(rows)


def results(tmp_path, name: str, df: pd.DataFrame, config: dict = CONFIG):
    root = tmp_path / name
    (root / "parsed" / "scaling").mkdir(parents=True)
    (root / "stats" / "scaling").mkdir(parents=True)
    df.to_csv(root / "parsed" / "scaling" / "samples.tsv", sep="\t", index=False)
    describe(df, GROUP).to_csv(root / "stats" / "scaling" / "summary.tsv", sep="\t", index=False)
    env = {"config": config, "hosts": {config["host"]: {"cpu_model": "X"}}, "engines": {}, "images": []}
    (root / "stats" / "environment.json").write_text(json.dumps(env))
    return root


def compare(today_root, session_path, tmp_path, across=False, siblings=()):
    with_dir = tmp_path / "unpacked"
    with_dir.mkdir(exist_ok=True)
    session = sessions.load(session_path, with_dir)
    # Each session unpacked in a folder of its own (a folder holds one session).
    others = [sessions.load(p, tmp_path / f"unpacked-{i}") for i, p in enumerate(siblings)]
    env = json.loads((today_root / "stats" / "environment.json").read_text())
    read = lambda p: pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)  # noqa: E731
    return changes.compare(
        "scaling",
        read(today_root / "parsed/scaling/samples.tsv"),
        read(today_root / "stats/scaling/summary.tsv"),
        env,
        session,
        0.05,
        across,
        siblings=[session, *others] if others else (),
    )


def test_the_verdict_rule():
    assert changes.verdict(0.06, 0.2, 0.05) == "changed"
    assert changes.verdict(-0.3, -0.051, 0.05) == "changed"
    assert changes.verdict(-0.04, 0.049, 0.05) == "unchanged"
    assert changes.verdict(-0.04, 0.08, 0.05) == "inconclusive"
    assert changes.verdict(float("nan"), 0.0, 0.05) == "inconclusive"


def test_a_changed_cell_is_found_with_its_sign_and_the_other_is_not(tmp_path):
    saved = sessions.save("before", results(tmp_path, "a", samples(1)), tmp_path / "before.tar.gz")
    df = compare(results(tmp_path, "b", samples(2, slow=1.25)), saved, tmp_path)
    by_n = df.set_index("instances")
    assert by_n.loc["2", "verdict"] == "changed"
    assert by_n.loc["2", "change"] == pytest.approx(-0.25, abs=0.03)  # 25 % slower: worse, negative
    assert by_n.loc["2", "change_ci_high"] < -0.05
    assert by_n.loc["1", "verdict"] in ("unchanged", "inconclusive")
    assert set(df["definition"]) == {""}


def test_one_run_a_cell_judges_nothing(tmp_path):
    """An interval over one run's iterations leaves out what runs add: even a 25 % slowdown gets
    no verdict (two sessions of the same code, one run a cell, were called changed in 19 of 208
    cells by such intervals)."""
    saved = sessions.save("before", results(tmp_path, "a", samples(1, runs=1)), tmp_path / "before.tar.gz")
    df = compare(results(tmp_path, "b", samples(2, slow=1.25, runs=1)), saved, tmp_path)
    assert set(df["verdict"]) == {"inconclusive"}
    assert df["ci_method"].str.contains("iterations only; no verdict").all()
    assert (
        df.set_index("instances").loc["2", "change_ci_high"] < -0.05
    )  # the interval alone would say changed
    assert changes.verdict(0.06, 0.2, 0.05, covers_runs=False) == "inconclusive"
    today = tmp_path / "b"
    df.to_csv(today / "stats/scaling/changes.tsv", sep="\t", index=False)
    (today / "stats/scaling/changes.json").write_text(json.dumps({"before": {"host": "h1", "saved_at": 0}}))
    text = "\n".join(
        str(b.content) for b in changes_section.blocks(Document(today / "stats", studies="scaling"))
    )
    assert "cover iterations only. Some give no verdict" in text


def test_identical_sessions_never_change(tmp_path):
    saved = sessions.save("same", results(tmp_path, "a", samples(3)), tmp_path / "same.tar.gz")
    df = compare(results(tmp_path, "b", samples(4)), saved, tmp_path)
    assert "changed" not in set(df["verdict"])


def test_a_corrupt_or_partial_session_is_refused(tmp_path):
    saved = sessions.save("s", results(tmp_path, "a", samples(1)), tmp_path / "s.tar.gz")
    unpacked = tmp_path / "x"
    with tarfile.open(saved) as tar:
        tarballs.extract(tar, unpacked)
    (unpacked / "s/parsed/scaling/samples.tsv").write_text("host\n")
    with tarfile.open(tmp_path / "corrupt.tar.gz", "w:gz") as tar:
        tar.add(unpacked / "s", "s")
    with pytest.raises(sessions.SessionError, match="does not match its sha256"):
        sessions.load(tmp_path / "corrupt.tar.gz", tmp_path / "c")
    (unpacked / "s/parsed/scaling/samples.tsv").unlink()
    with tarfile.open(tmp_path / "partial.tar.gz", "w:gz") as tar:
        tar.add(unpacked / "s", "s")
    with pytest.raises(sessions.SessionError, match="partial session"):
        sessions.load(tmp_path / "partial.tar.gz", tmp_path / "p")
    with pytest.raises(sessions.SessionError, match="session name"):
        sessions.save("../x", results(tmp_path, "b", samples(1)), tmp_path / "y.tar.gz")


def test_another_definition_is_refused_naming_the_key_unless_asked(tmp_path):
    other = {**CONFIG, "studies": {"scaling": {"runtimes": ["docker"], "iterations": 3}}}
    saved = sessions.save("old", results(tmp_path, "a", samples(1), other), tmp_path / "old.tar.gz")
    today = results(tmp_path, "b", samples(2))
    with pytest.raises(sessions.SessionError, match=r"iterations was 3, this config has 10"):
        compare(today, saved, tmp_path)
    df = compare(today, saved, tmp_path, across=True)
    assert set(df["definition"]) == {"iterations: 3 then, 10 now"}


def _check(tmp_path, today, saved: list, capsys) -> tuple[int, str]:
    """changes.py on today's results against the saved sessions, then the regression check."""
    stats = tmp_path / "stats"
    shutil.rmtree(stats, ignore_errors=True)
    (stats / "scaling").mkdir(parents=True)
    assert changes.main([
        "--study", "scaling", "--samples", str(today / "parsed/scaling/samples.tsv"),
        "--summary", str(today / "stats/scaling/summary.tsv"),
        "--environment", str(today / "stats/environment.json"),
        "--sessions", *map(str, saved), "--out", str(stats / "scaling" / "changes.tsv"),
    ]) == 0  # fmt: skip
    capsys.readouterr()
    code = sessions.main(["check", "--stats-dir", str(stats)])
    return code, capsys.readouterr().out


def test_the_regression_check_exits_1_on_a_change_across_sessions(tmp_path, capsys):
    saved = [
        sessions.save(f"before{i}", results(tmp_path, f"a{i}", samples(seed)), tmp_path / f"before{i}.tar.gz")
        for i, seed in enumerate((1, 3, 4))
    ]
    slower = results(tmp_path, "b", samples(2, slow=1.25))
    # Against one saved session: printed, not failing (a session's own shift looks the same).
    code, out = _check(tmp_path, slower, saved[:1], capsys)
    assert code == 0
    assert "changed: scaling runtime=docker instances=2 metric=execution_time against before0" in out
    assert sessions.ONE_SESSION in out and "1 cells changed beyond the threshold" in out
    # Three saved sessions of the definition: the N=2 cell moved against its microservice's
    # shift (the N=1 cell did not), beyond 5 % after Holm's correction: it fails.
    code, out = _check(tmp_path, slower, saved, capsys)
    assert code == 1, out
    assert sessions.ONE_SESSION not in out
    assert (
        "failing: scaling runtime=docker instances=2 metric=execution_time, cell beyond its subject's "
        "shift: -11.8%" in out
        and "failing: scaling docker execution_time, subject's shift: -11.8%" in out
        and "against 3 sessions" in out and "over 3 questions" in out
    )  # fmt: skip
    # A cell the summary leaves out (the pair study's drift baseline, case 1-end) is still read.
    frame = pd.read_csv(slower / "parsed/scaling/samples.tsv", sep="\t", dtype=str, keep_default_na=False)
    rows = changes._regression("scaling", json.loads((slower / "stats/environment.json").read_text()),
                               [sessions.load(p, tmp_path / f"r{i}") for i, p in enumerate(saved)],
                               frame, ["runtime", "instances", "metric"], 0.05)  # fmt: skip
    assert set(rows["cell"]) >= {"runtime=docker instances=2 metric=execution_time"}
    # Nothing changed: it passes.
    code, out = _check(tmp_path, results(tmp_path, "c", samples(5)), saved, capsys)
    assert code == 0 and "0 stay beyond it" in out, out


def test_the_changes_section_is_computed_from_the_tables(tmp_path):
    saved = sessions.save("before", results(tmp_path, "a", samples(1)), tmp_path / "before.tar.gz")
    today = results(tmp_path, "b", samples(2, slow=1.25))
    df = compare(today, saved, tmp_path)
    df.to_csv(today / "stats/scaling/changes.tsv", sep="\t", index=False)
    record = {"before": {"host": "h1", "saved_at": 0, "differences": ["engine docker.version: 20 → 24"]}}
    (today / "stats/scaling/changes.json").write_text(json.dumps(record))

    def text():
        return "\n".join(
            str(b.content) for b in changes_section.blocks(Document(today / "stats", studies="scaling"))
        )

    first = text()
    assert "## Changes" in first and "against session before" in first
    assert "1 changed (1 means worse, 0 better)" in first and "engine docker.version: 20 → 24" in first
    assert "The means' intervals cover runs and iterations." in first  # three runs a cell here
    df.loc[df["instances"] == "2", "verdict"] = "unchanged"
    df.to_csv(today / "stats/scaling/changes.tsv", sep="\t", index=False)
    assert "0 changed (0 means worse, 0 better)" in text()


def test_history_over_sessions_finds_where_the_level_moved(tmp_path):
    """Two sessions of the same level, then today 25 % slower in one cell: the history names the
    change after the second session for that cell only, and the report draws it."""
    s1 = sessions.save("s1", results(tmp_path, "a", samples(1)), tmp_path / "s1.tar.gz")
    s2 = sessions.save("s2", results(tmp_path, "b", samples(2)), tmp_path / "s2.tar.gz")
    today = results(tmp_path, "c", samples(3, slow=1.25))
    stats = today / "stats"
    args = ["--study", "scaling", "--samples", str(today / "parsed/scaling/samples.tsv")]
    args += [
        "--summary",
        str(stats / "scaling/summary.tsv"),
        "--environment",
        str(stats / "environment.json"),
    ]
    assert (
        changes.main([*args, "--sessions", str(s1), str(s2), "--out", str(stats / "scaling/changes.tsv")])
        == 0
    )
    h = pd.read_csv(stats / "scaling/history.tsv", sep="\t", keep_default_na=False)
    points = h.groupby("cell")["change_points"].first()
    assert points["runtime=docker instances=2 metric=execution_time"] == "s2"
    assert points["runtime=docker instances=1 metric=execution_time"] == ""
    assert list(h[h["cell"].str.contains("instances=2")]["session"]) == ["s1", "s2", "today"]
    # Two sessions of one definition: the variance at each level, per subject (runtime, metric).
    sv = pd.read_csv(stats / "scaling/session_variance.tsv", sep="\t")
    assert list(sv["subject"]) == ["docker execution_time"] and list(sv["sessions"]) == ["s1, s2"]
    assert 0 <= sv["session_share"].iloc[0] <= 1 and sv["df_session"].iloc[0] == 1
    found = changes_section.blocks(Document(stats, studies="scaling"))
    assert any("**Variance between sessions**" in str(b.content) for b in found)
    assert any(b.kind == "fig" or "<img" in str(b.content) for b in found)
    assert any("instances=2 metric=execution_time after s2" in str(b.content) for b in found)


def test_a_session_that_is_not_there_is_refused_before_anything_runs(tmp_path):
    from interference.steps.config import ConfigError, validate

    cfg = {
        "studies": {"pairs": {"microservices": ["L"], "cases": ["1"]}},
        "compare_with": [str(tmp_path / "x.tar.gz")],
    }
    with pytest.raises(ConfigError, match=r"compare_with\[0\] names .*x.tar.gz', which is no file here"):
        validate(cfg)
    assert validate(cfg, machine=False)["change_threshold"] == 0.05


def test_a_studys_ratios_are_compared_as_differences(tmp_path):
    """Beside the means, each ratio the study declares (Study.compared; scaling: its slowdown)
    today against the session's: their difference with a CI from the two tables' CIs."""

    def with_slowdown(root, value, half):
        row = {"host": "h1", "runtime": "docker", "instances": 2, "n": 12, "mean_s": 20, "reference": "baremetal",
               "reference_mean_s": 10, "slowdown": value, "ci_low": value - half, "ci_high": value + half}  # fmt: skip
        pd.DataFrame([row]).to_csv(root / "stats/scaling/slowdown.tsv", sep="\t", index=False)
        return root

    then = with_slowdown(results(tmp_path, "a", samples(1)), 1.0, 0.05)
    saved = sessions.save("before", then, tmp_path / "before.tar.gz")
    today = with_slowdown(results(tmp_path, "b", samples(2)), 1.5, 0.05)
    unpacked = tmp_path / "u"
    unpacked.mkdir()
    session = sessions.load(saved, unpacked)
    read = lambda p: pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)  # noqa: E731
    df = changes.compare(
        "scaling", read(today / "parsed/scaling/samples.tsv"), read(today / "stats/scaling/summary.tsv"),
        json.loads((today / "stats/environment.json").read_text()), session, 0.05, False, today / "stats/scaling",
    )  # fmt: skip
    [ratio] = df[df["quantity"] == "slowdown.slowdown"].to_dict("records")
    assert ratio["cell"] == "runtime=docker instances=2 reference=baremetal" and ratio["verdict"] == "changed"
    assert ratio["change"] == pytest.approx(0.5)
    assert ratio["change_ci_low"] == pytest.approx(0.5 - math.hypot(0.05, 0.05), rel=1e-6)
    assert set(df[df["quantity"] == "mean"]["verdict"]) <= {"unchanged", "inconclusive"}


def test_two_saved_sessions_of_one_definition_widen_the_interval_by_their_variance(tmp_path):
    """Two saved sessions 6 % apart in the N=2 cell: compared with one of them alone the
    interval covers its runs and iterations; given both, the variance between them enters (the row
    says so) and the interval is wider."""
    s1 = sessions.save("s1", results(tmp_path, "a", samples(1)), tmp_path / "s1.tar.gz")
    s2 = sessions.save("s2", results(tmp_path, "b", samples(2, slow=1.06)), tmp_path / "s2.tar.gz")
    today = results(tmp_path, "c", samples(3))
    env = json.loads((today / "stats" / "environment.json").read_text())
    read = lambda p: pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)  # noqa: E731
    loaded = [sessions.load(p, tmp_path / f"u{i}") for i, p in enumerate((s1, s2))]
    args = (
        "scaling",
        read(today / "parsed/scaling/samples.tsv"),
        read(today / "stats/scaling/summary.tsv"),
        env,
    )
    alone = changes.compare(*args, loaded[0], 0.05, False).set_index("instances")
    pooled = changes.compare(*args, loaded[0], 0.05, False, siblings=loaded).set_index("instances")
    assert (
        alone.loc["2", "ci_method"].endswith("runs and iterations") and alone.loc["2", "sessions_pooled"] == 1
    )
    assert (
        pooled.loc["2", "ci_method"].endswith("the spread of 2 sessions (their runs and iterations included)")
        and pooled.loc["2", "sessions_pooled"] == 2
    )
    width = lambda r: r["change_ci_high"] - r["change_ci_low"]  # noqa: E731
    assert width(pooled.loc["2"]) > 3 * width(alone.loc["2"])
    assert pooled.loc["2", "change"] == alone.loc["2", "change"]


def test_a_key_that_changes_no_run_is_not_another_definition():
    """network_server_cpus (2026-11-29) against a session saved before it: the same definition
    where no microservice has a server, another where one has (its servers moved)."""
    then = {"studies": {"pairs": {"microservices": ["L", "S"], "iterations": 3}}}
    today = {
        "studies": {"pairs": {"microservices": ["L", "S"], "iterations": 3, "network_server_cpus": "member"}}
    }
    assert changes.definition_differences(today, then, "pairs") == [("network_server_cpus", "member", None)]
    assert changes.study_differences(today, then, "pairs") == []
    for ms in (["L", "NR"], ["NS"]):
        then["studies"]["pairs"]["microservices"] = today["studies"]["pairs"]["microservices"] = ms
        assert changes.study_differences(today, then, "pairs") == [("network_server_cpus", "member", None)]
    today["studies"]["pairs"]["iterations"] = 5  # any other key still counts
    today["studies"]["pairs"]["microservices"] = then["studies"]["pairs"]["microservices"] = ["L"]
    assert changes.study_differences(today, then, "pairs") == [("iterations", 5, 3)]
    assert changes.study_differences(today, then, "scaling") == []  # a study with nothing inert
