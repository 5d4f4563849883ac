"""The pair study's parse() on a run folder made from real captured outputs: one tidy row per sample and
metric, failures as statuses with empty values, never a crash of the whole parse."""

import json
import shutil

from conftest import REPO
from interference.studies.pairs.parse import COLUMNS, parse

FIXTURES = REPO / "tests" / "fixtures"


def parse_run(meta_path):
    """One run's tidy rows from its meta.json and the raw files beside it."""
    return parse(json.loads(meta_path.read_text()), meta_path.parent)


def make_run(tmp_path, ms_id, outputs, statuses, case="3b", members=("B", "L")):
    run = tmp_path / "run"
    meta_members = []
    for k, m in enumerate(members):
        d = run / f"member{k + 1}-{m}"
        d.mkdir(parents=True)
        its = []
        if m == ms_id:
            for i, (name, status) in enumerate(zip(outputs, statuses), start=1):
                if name:
                    for ext in ("out", "err"):
                        shutil.copy(FIXTURES / m / f"{name}.{ext}", d / f"iter{i:04d}.{ext}")
                its.append(
                    {
                        "iteration": i,
                        "start": 10.0 * i,
                        "end": 10.0 * i + 5,
                        "exit_code": 0,
                        "status": status,
                        "in_overlap": i > 1,
                        "stdout": f"{d.name}/iter{i:04d}.out",
                        "stderr": f"{d.name}/iter{i:04d}.err",
                    }
                )
        meta_members.append({"member": k + 1, "microservice": m, "iterations": its})
    settings = {"host": "h", "runtime": "docker", "case": case, "pair": "+".join(members), "repetition": 1}
    (run / "meta.json").write_text(json.dumps({"settings": settings, "members": meta_members}))
    return run / "meta.json"


def test_rows_statuses_and_partial_failures(tmp_path):
    meta = make_run(
        tmp_path, "B", ["ok", "plus_seeks_edited", "garbled_edited", None], ["ok", "ok", "ok", "timeout"]
    )
    df = parse_run(meta)
    assert list(df.columns) == COLUMNS
    assert len(df) == 4 * 4 and set(df["partner"]) == {"L"} and set(df["target"]) == {"B"}
    ok = df[df["iteration"] == 1]
    assert (ok["status"] == "ok").all() and ok["value"].notna().all()
    partial = df[df["iteration"] == 2].set_index("metric")
    assert partial.loc["random_seeks", "status"] == "bonnie++ reported +++++ for random_seeks"
    assert partial["value"].isna().sum() == 1 and (partial.drop("random_seeks")["status"] == "ok").all()
    assert (df[df["iteration"] == 3]["status"] == "garbled output").all()
    timed_out = df[df["iteration"] == 4]
    assert (timed_out["status"] == "timeout").all() and timed_out["value"].isna().all()
    assert df[df["iteration"] == 1]["in_overlap"].eq(False).all()


def test_missing_raw_file_is_a_status(tmp_path):
    meta = make_run(tmp_path, "L", [None], ["ok"], case="1", members=("L",))
    df = parse_run(meta)
    assert df["status"].tolist() == ["missing output"] and df["partner"].tolist() == [""]


def test_a_triples_member_is_beside_its_two_others_named_in_order(tmp_path):
    meta = make_run(tmp_path, "B", ["ok"], ["ok"], case="3a", members=("S", "B", "L"))
    df = parse_run(meta)
    assert set(df["target"]) == {"B"} and set(df["partner"]) == {"L+S"}  # as the predictor names it
    # Case 2-3a: S and B share a container, L runs apart.
    shared = parse_run(
        make_run(tmp_path / "mixed", "B", ["ok"], ["ok"], case="2-3a", members=("S", "B", "L"))
    )
    assert set(shared["partner"]) == {"S|L"}
    apart = parse_run(make_run(tmp_path / "apart", "B", ["ok"], ["ok"], case="2-3a", members=("S", "L", "B")))
    assert set(apart["partner"]) == {"L+S"}
