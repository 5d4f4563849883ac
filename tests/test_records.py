"""The run record (core/records.py): what the runner writes into every meta.json, one serializer,
and a loader that still reads the files written before meta.json had a schema version."""

import json
import shutil

import pytest
from conftest import REPO
from interference.core import records
from interference.core.records import SCHEMA_VERSION, RecordError, RunRecord
from interference.steps import parse, run_tables

SAVED = REPO / "tests" / "fixtures" / "runs"


def a_record(**changes) -> RunRecord:
    fields = {
        "study": "pairs",
        "settings": {"host": "h", "runtime": "docker", "key": "case1/L", "repetition": 2, "case": "1"},
        "run_id": "abc",
        "host_info": {"cores": 2},
        "runtime_info": {"engine": "Docker Engine"},
        "started": 10.0,
        "finished": 12.5,
        "runtime_run": {},
        "telemetry": {"interval_s": 0.5, "samples": 4, "file": "telemetry.tsv"},
        "leftovers_removed": ["container x"],
        "reaped_before": [],
        "containers": [{"name": "x", "role": "member1"}],
        "events": ["an event"],
        "study_fields": {"members": [], "n_iterations": 3, "n_failed": 1},
    }
    return RunRecord(**{**fields, **changes})


@pytest.mark.parametrize("telemetry", [{"interval_s": 0.5, "samples": 4, "file": "telemetry.tsv"}, None])
def test_a_record_round_trips_through_its_json(tmp_path, telemetry):
    record = a_record(telemetry=telemetry)
    records.write(record, tmp_path / "meta.json")
    assert not (tmp_path / "meta.tmp").exists()
    written = json.loads((tmp_path / "meta.json").read_text())
    assert written["schema_version"] == SCHEMA_VERSION
    assert ("telemetry" in written) == (telemetry is not None)  # absent when off, as before
    assert records.load(tmp_path / "meta.json") == record
    assert (record.n_iterations, record.n_failed) == (3, 1)


def test_the_json_keeps_the_order_the_runner_always_wrote():
    keys = list(a_record().to_json())
    assert keys[:8] == [
        "schema_version", "study", "settings", "run_id", "host_info", "runtime_info", "started", "runtime_run"
    ]  # fmt: skip
    assert keys[8:11] == ["members", "n_iterations", "n_failed"]  # the study's own
    assert keys[11:] == [
        "telemetry",
        "leftovers_removed",
        "reaped_before",
        "finished",
        "containers",
        "events",
    ]


@pytest.mark.parametrize("run", ["pairs-case3b-v0", "pairs-case1-end-v0"])
def test_a_saved_meta_json_without_a_version_loads_as_version_0(run):
    saved = json.loads((SAVED / run / "meta.json").read_text())
    record = records.load(SAVED / run / "meta.json")
    assert record.schema_version == 0 and record.study == "pairs"
    assert record.identity.key == saved["settings"]["key"] and record.identity.repetition == 1
    # Everything it held is kept, in its order; beside the version only the defaults of fields
    # the runner did not write yet.
    out = record.to_json()
    assert {k: v for k, v in out.items() if k in saved} == saved
    assert [k for k in out if k in saved] == list(saved)
    assert {k: out[k] for k in out.keys() - saved.keys()} in (
        {"schema_version": 0},
        {"schema_version": 0, "runtime_run": None, "reaped_before": []},
    )


def test_fields_older_files_lack_default():
    record = records.load(SAVED / "pairs-case1-end-v0" / "meta.json")  # before runtime_run, reaped_before
    assert record.runtime_run is None and record.reaped_before == [] and record.telemetry is None


@pytest.mark.parametrize("run", ["pairs-case3b-v0", "pairs-case1-end-v0"])
def test_a_saved_run_gives_the_samples_and_runs_row_it_gave_before_the_types(tmp_path, run):
    """The files were made by the code of commit 564b494: results must not change (the members'
    facts are the same values, as rows of run_members.tsv: fixtures/runs/README.md)."""
    shutil.copytree(SAVED / run, tmp_path / run)
    meta = tmp_path / run / "meta.json"
    parse.write(parse.parse_run(meta), tmp_path / "samples.tsv")
    assert (tmp_path / "samples.tsv").read_text() == (SAVED / run / "expected-samples.tsv").read_text()
    runs = run_tables.runs_table([meta]).assign(meta="meta.json")
    runs.to_csv(tmp_path / "runs.tsv", sep="\t", index=False, float_format="%.6f")
    assert (tmp_path / "runs.tsv").read_text() == (SAVED / run / "expected-runs.tsv").read_text()
    members = run_tables.members_table([meta], "pairs")
    members.to_csv(tmp_path / "members.tsv", sep="\t", index=False, float_format="%.6f")
    assert (tmp_path / "members.tsv").read_text() == (SAVED / run / "expected-members.tsv").read_text()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"settings": {"host": "h", "runtime": "docker", "key": "k"}}, "settings.repetition"),
        (
            {"settings": {"host": "h", "runtime": "docker", "key": "k", "repetition": "1"}},
            "settings.repetition",
        ),
        ({"started": "yesterday"}, "started"),
        ({"events": "one"}, "events"),
        ({"study": None}, "study"),
        ({"schema_version": True}, "schema_version"),
    ],
)
def test_a_bad_record_names_the_file_and_the_field(tmp_path, change, field):
    path = tmp_path / "meta.json"
    path.write_text(json.dumps({**a_record().to_json(), **change}))
    with pytest.raises(RecordError, match=f"{path}: field '{field}'"):
        records.load(path)


def test_a_missing_field_and_a_newer_version_are_refused_by_name(tmp_path):
    d = a_record().to_json()
    with pytest.raises(RecordError, match="field 'settings' is missing; expected dict"):
        RunRecord.from_json({k: v for k, v in d.items() if k != "settings"})
    with pytest.raises(RecordError, match="field 'schema_version' is 99; this code reads versions"):
        RunRecord.from_json({**d, "schema_version": 99})
    (tmp_path / "meta.json").write_text("[]")
    with pytest.raises(RecordError, match="a run record is a JSON object"):
        records.load(tmp_path / "meta.json")


def test_a_study_cannot_return_a_field_the_runner_writes():
    with pytest.raises(RecordError, match=r"returned fields the runner writes itself: \['events'\]"):
        a_record(study_fields={"events": []})
