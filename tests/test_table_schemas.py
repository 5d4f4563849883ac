"""The declared columns of every statistics table (core/table_schema.py, each study's schemas):
a table that matches passes untouched, one that does not is refused naming the table and the
column, and the statistics step writes nothing it refused."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from interference import studies
from interference.core.table_schema import FLAG, INTEGER, NUMBER, TEXT, TableSchema, TableSchemaError
from interference.steps import statistics as step
from interference.studies.pairs import schemas

SMALL = TableSchema(host=TEXT, n=INTEGER, mean=NUMBER, higher_is_better=FLAG, note=TEXT)


def good() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "host": ["a", "b"],
            "n": [3, 1],
            "mean": [1.5, np.nan],  # a statistic that could not be computed is left empty
            "higher_is_better": [True, False],
            "note": ["", "fewer than 2 samples"],
        }
    )


def refusal(df: pd.DataFrame, table: str = "pairs/summary") -> str:
    with pytest.raises(TableSchemaError) as e:
        SMALL.validate(df, table)
    return str(e.value)


def test_a_good_table_passes_untouched():
    df = good()
    before = df.copy(deep=True)
    SMALL.validate(df, "pairs/summary")
    pd.testing.assert_frame_equal(df, before)  # nothing coerced, nothing reordered


def test_an_empty_table_and_the_dtypes_a_gap_makes_pass():
    SMALL.validate(pd.DataFrame(columns=SMALL.columns), "pairs/summary")  # all object
    gaps = good().astype({"n": float, "higher_is_better": object})
    gaps.loc[1, ["n", "higher_is_better"]] = [np.nan, None]
    SMALL.validate(gaps, "pairs/summary")


def test_a_missing_column_is_refused_naming_table_and_column():
    message = refusal(good().drop(columns="mean"))
    assert "pairs/summary" in message and "column 'mean' is missing" in message


@pytest.mark.parametrize(
    ("column", "value", "kind"),
    [("mean", "fast", "numbers"), ("n", 2.5, "whole numbers"), ("higher_is_better", "yes", "True or False"),
     ("host", 7, "text"), ("n", True, "whole numbers")],
)  # fmt: skip
def test_a_wrong_dtype_is_refused_naming_table_and_column(column, value, kind):
    df = good().astype({column: object})
    df.loc[1, column] = value
    message = refusal(df)
    assert message.startswith("table pairs/summary:"), message
    assert f"column {column!r} must hold {kind}, but has {value!r} (row 1)" in message


def test_an_undeclared_or_reordered_column_is_refused():
    assert "column 'extra' is not declared" in refusal(good().assign(extra=1))
    assert "out of the declared order" in refusal(good()[["n", "host", "mean", "higher_is_better", "note"]])


def test_every_table_a_study_declares_has_a_schema():
    for study in studies.registry().values():
        for name, table in study.tables.items():
            assert isinstance(table.schema, TableSchema), f"{study.name}/{name} declares no columns"


def test_the_pair_studys_column_lists_come_from_its_schemas():
    """The statistics and the report read the names declared once (schemas.py)."""
    from interference.studies.pairs import statistics as st
    from interference.studies.pairs.section import data

    assert schemas.SUMMARY.columns == st.SUMMARY_COLUMNS
    assert st.NUMERIC_COLUMNS["interference"] == schemas.INTERFERENCE.numeric
    assert data.TABLES["runtimes"] == (schemas.RUNTIMES.columns, schemas.RUNTIMES.numeric)
    assert "higher_is_better" not in schemas.SUMMARY.numeric and "n" in schemas.SUMMARY.numeric


def test_a_declaration_with_a_column_twice_or_an_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="'host' is declared twice"):
        TableSchema(schemas.FAMILY, host=TEXT)
    with pytest.raises(ValueError, match="unknown kind 'float'"):
        TableSchema(x="float")


def _run_step(monkeypatch, tmp_path, df: pd.DataFrame) -> tuple[int, pd.DataFrame]:
    study = studies.get("pairs")
    monkeypatch.setattr(type(study), "compute_table", lambda self, name, inputs, jobs: df)
    out = tmp_path / "summary.tsv"
    code = step.main(["--study", "pairs", "--table", "summary", "--input", "samples=x", "--out", str(out)])
    return code, out


def summary_row() -> pd.DataFrame:
    row = {c: "x" for c in schemas.SUMMARY.of(TEXT)}
    row |= {c: 1 for c in schemas.SUMMARY.of(INTEGER)} | {c: 0.5 for c in schemas.SUMMARY.of(NUMBER)}
    row |= {c: True for c in schemas.SUMMARY.of(FLAG)}
    return pd.DataFrame([row], columns=schemas.SUMMARY.columns)


def test_the_statistics_step_writes_a_valid_table_byte_for_byte(monkeypatch, tmp_path):
    df = summary_row()
    code, out = _run_step(monkeypatch, tmp_path, df)
    assert code == 0
    step.write(df, tmp_path / "unchecked.tsv")
    assert out.read_bytes() == (tmp_path / "unchecked.tsv").read_bytes()


def test_the_statistics_step_refuses_a_wrong_table_and_writes_nothing(monkeypatch, tmp_path, caplog):
    df = summary_row().drop(columns="ci_method")
    with caplog.at_level(logging.ERROR, logger="statistics"):
        code, out = _run_step(monkeypatch, tmp_path, df)
    assert code == 1 and not out.exists()
    assert "table pairs/summary: column 'ci_method' is missing" in caplog.text


def test_summaries_the_other_tests_do_not_compute_validate(tmp_path):
    """creation's and network's summaries, from a small samples table of each (the other tables
    are computed, and so checked, by their studies' own tests through the step's schemas)."""
    from interference.studies.creation import statistics as creation
    from interference.studies.network import statistics as network

    rows = {
        "creation": [
            {"host": "h", "runtime": "nested", "variant": "load", "entities": 2, "children": 1, "repetition": 1,
             "entity": e, "metric": "created_to_exit", "value": 1.0 + e / 10, "unit": "s",
             "higher_is_better": False, "status": "ok"}
            for e in range(3)
        ],
        "network": [
            {"host": "h", "runtime": "baremetal", "microservice": "NS", "direction": "to-host", "mode": "host",
             "repetition": 1, "iteration": i, "metric": "throughput", "value": 100.0 + i, "unit": "Mbit/s",
             "higher_is_better": True, "start": 0, "end": 1, "status": "ok"}
            for i in range(3)
        ],
    }  # fmt: skip
    from interference.studies.creation.parse import SAMPLE_COLUMNS as CREATION_SAMPLES
    from interference.studies.network.parse import SAMPLE_COLUMNS as NETWORK_SAMPLES

    columns = {"creation": CREATION_SAMPLES, "network": NETWORK_SAMPLES}
    for name, module in (("creation", creation), ("network", network)):
        path = tmp_path / f"{name}.tsv"
        pd.DataFrame(rows[name], columns=columns[name]).to_csv(path, sep="\t", index=False)
        table = module.summary({"samples": path}, 1)
        studies.get(name).tables["summary"].schema.validate(table, f"{name}/summary")


def test_the_sample_rows_columns_come_from_the_sample_record():
    from interference.core.samples import Sample
    from interference.steps.parse import SAMPLE_SCHEMA

    assert SAMPLE_SCHEMA.kinds == {"metric": TEXT, "value": NUMBER, "unit": TEXT, "higher_is_better": FLAG,
                                   "status": TEXT}  # fmt: skip
    rows = [Sample("gflops", 1.5, "GFLOPS", True, "ok").row(host="h", iteration=1),
            Sample("gflops", None, "GFLOPS", True, "timeout").row(host="h", iteration=2)]  # fmt: skip
    SAMPLE_SCHEMA.validate(pd.DataFrame(rows).assign(psi_cpu_some=0.1), "samples", exact=False)


def test_the_parse_step_checks_a_runs_rows_before_writing(monkeypatch, tmp_path, caplog):
    """A real run's rows (the pair study's parser on a captured Linpack output) are written; rows
    whose value is not a number are refused, naming the column, and nothing is written."""
    from interference.steps import parse
    from test_parse_run import make_run

    meta = make_run(tmp_path, "L", ["ok"], ["ok"], case="1", members=("L",))
    # A whole run record (core/records.py): what make_run leaves out, as the runner writes it.
    record = json.loads(meta.read_text())
    record["settings"] |= {"study": "pairs", "key": "case1/L"}
    meta.write_text(json.dumps(record | {"study": "pairs"}))
    assert parse.main([str(meta), str(tmp_path / "ok.tsv")]) == 0
    assert (tmp_path / "ok.tsv").read_text().count("\n") == 2  # header and the one sample
    bad = parse.parse_run(meta).astype({"value": object}).assign(value="12,5")
    monkeypatch.setattr(parse, "parse_run", lambda path: bad)
    with caplog.at_level(logging.ERROR, logger="parse"):
        assert parse.main([str(meta), str(tmp_path / "bad.tsv")]) == 1
    assert not (tmp_path / "bad.tsv").exists()
    assert "column 'value' must hold numbers, but has '12,5'" in caplog.text


def test_the_run_tables_step_checks_the_member_rows_before_writing(monkeypatch, tmp_path, capsys):
    """A saved pair run's members are written as rows of run_members.tsv; a member row whose
    count is not a whole number is refused, naming the column, and nothing is written. A study
    whose runs have no members has the generic columns and no rows."""
    from interference.core.table_schema import RUN_MEMBER
    from interference.steps import run_tables

    meta = REPO / "tests" / "fixtures" / "runs" / "pairs-case3b-v0" / "meta.json"
    out = tmp_path / "run_members.tsv"
    assert run_tables.main(["--study", "pairs", "--metas", str(meta), "--members", str(out)]) == 0
    written = pd.read_csv(out, sep="\t", dtype=str, keep_default_na=False)
    assert list(written.columns) == schemas.RUN_MEMBERS.columns
    assert list(written["role"]) == ["member1", "member2"] and list(written["microservice"]) == ["L", "S"]
    pairs = studies.get("pairs")
    rows = pairs.member_rows
    monkeypatch.setattr(
        type(pairs), "member_rows", lambda self, m: [r | {"iterations": "3"} for r in rows(m)]
    )
    bad = tmp_path / "bad.tsv"
    assert run_tables.main(["--study", "pairs", "--metas", str(meta), "--members", str(bad)]) == 1
    assert not bad.exists()
    assert "table pairs/run_members: column 'iterations' must hold whole numbers" in capsys.readouterr().err
    assert list(run_tables.members_table([], "profiling").columns) == RUN_MEMBER.columns
    with pytest.raises(ValueError, match="a run of study 'pairs', not of 'profiling'"):
        run_tables.members_table([meta], "profiling")
