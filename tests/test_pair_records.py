"""The pair study's records (studies/pairs/records.py): its typed run key, and what its execute()
puts into meta.json, each with one serializer; saved runs (version 0) still read."""

import json
import os
import types

import pytest
from conftest import REPO
from interference import studies
from interference.core.records import RecordError
from interference.steps.config import validate
from interference.studies.pairs import execute
from interference.studies.pairs.records import PairIteration, PairKey, PairMember, PairResults

SAVED = REPO / "tests" / "fixtures" / "runs"
PAIRS = studies.get("pairs")


def test_every_run_key_of_a_config_is_a_typed_key_and_back():
    cfg = validate(
        {
            "studies": {
                "pairs": {
                    "microservices": ["L", "S"],
                    "drift_check": True,
                    "cases": ["1", "1u", "2", "3a", "3b"],
                }
            }
        }
    )
    keys = [r.key for r in PAIRS.runs(cfg["studies"]["pairs"])]
    assert "case3b/L+S" in keys and "case1u/S" in keys and "case1-end/L" in keys
    for key in keys:
        run = PAIRS.run_of(key)
        assert PAIRS.key_of(run) == key
        assert PairKey.from_settings(run.settings()) == run  # the settings carry the same run
    assert PAIRS.run_of("case1-end/L") == PairKey("1", ("L",), at_end=True)
    assert PAIRS.run_of("case3b/L+S") == PairKey("3b", ("L", "S"))
    triple = PAIRS.run_of("case2/L+S+NS")  # a triple: its members in the key's order
    assert triple == PairKey("2", ("L", "S", "NS")) and PAIRS.key_of(triple) == "case2/L+S+NS"
    with pytest.raises(ValueError):
        PAIRS.run_of("case2/L+S+NS+Y")
    assert PairKey("1", ("L",), at_end=True).key_case == "1-end"  # its samples' case


@pytest.mark.parametrize(
    "case, members, at_end, says",
    [
        ("4", ("L",), False, "none of"),
        ("3b", ("L",), False, "runs 2 or 3 microservice"),
        ("3a", ("L", "S", "NS", "Y"), False, "runs 2 or 3 microservice"),
        ("2-3a", ("L", "S"), False, "runs 3 microservice"),
        ("1", ("L", "S"), False, "runs 1 microservice"),
        ("3b", ("L", "S"), True, "only Case 1"),
    ],
)
def test_a_run_that_cannot_be_is_refused(case, members, at_end, says):
    with pytest.raises(ValueError, match=says):
        PairKey(case, members, at_end)


def test_the_settings_of_a_run_come_from_its_key():
    cfg = validate({"studies": {"pairs": {"microservices": ["L", "S"]}}})["studies"]["pairs"]
    s = PAIRS.settings(cfg, "case1-end/L")
    assert list(s)[:3] == ["case", "at_end", "pair"] and (s["case"], s["pair"]) == ("1", "L")
    assert "at_end" not in PAIRS.settings(cfg, "case1/L") and PAIRS.after_all("case1-end/S")


def test_a_network_server_runs_on_its_members_cores_where_the_case_gives_it_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})  # whatever the test machine has
    cfg = validate({"studies": {"pairs": {"microservices": ["NR", "L", "NS"]}}})["studies"]["pairs"]
    assert cfg["network_server_cpus"] == "member"  # the default
    assert PAIRS.settings(cfg, "case3b/NR+L")["server_cpus"] == "member"
    assert PAIRS.settings(cfg, "case1-end/NR")["server_cpus"] == "member"
    # Settings change only where the rule moves a server, so no other run is made again: runs
    # without a server, the unlimited cases, and quota mode.
    assert "server_cpus" not in PAIRS.settings(cfg, "case1/L")
    for key in ("case1u/NR", "case2/NR+L", "case3a/NR+L", "case2-3a/NR+L+NS"):
        assert "server_cpus" not in PAIRS.settings(cfg, key), key
    quota = validate({"studies": {"pairs": {"microservices": ["NR"], "limits": {"cpu_mode": "quota"}}}})
    assert "server_cpus" not in PAIRS.settings(quota["studies"]["pairs"], "case1/NR")

    def cores_of_servers(key: str, server_cpus=None) -> list:
        settings = {k: v for k, v in PAIRS.settings(cfg, key).items() if k != "server_cpus"}
        if server_cpus:
            settings["server_cpus"] = server_cpus
        run = execute.CaseRun(types.SimpleNamespace(settings=settings, outdir=None))
        return [run.server_cpuset(k, {}) for k in range(len(run.members))]

    # Case 1 and 3b give each member its own core (cpuset mode), the unlimited cases none.
    assert cores_of_servers("case1/NR", "member") == ["0"]
    assert cores_of_servers("case1-end/NR", "member") == ["0"]
    assert cores_of_servers("case3b/NR+L", "member") == ["0", "1"]
    assert cores_of_servers("case3b/L+NR", "member") == ["0", "1"]
    for key in ("case1u/NR", "case2/NR+L", "case3a/NR+L"):
        assert cores_of_servers(key, "member") == [None] * len(PAIRS.run_of(key).members)
    # `any`, and the runs recorded before the key (no server_cpus): any core, as then.
    assert cores_of_servers("case3b/NR+L", "any") == [None, None]
    assert cores_of_servers("case3b/NR+L") == [None, None]
    with pytest.raises(Exception, match="network_server_cpus"):
        validate({"studies": {"pairs": {"microservices": ["NR"], "network_server_cpus": "other"}}})


def test_run_members_say_where_each_members_server_ran():
    """server_cpuset: the cores its server container asked for, 'any' when none, empty without one."""
    from interference.studies.pairs.runs import member_rows

    meta = json.loads((SAVED / "pairs-case3b-v0" / "meta.json").read_text())
    assert [r["server_cpuset"] for r in member_rows(meta)] == ["", ""]
    meta["containers"] += [
        {"name": "s1", "role": "server for member1", "limits_requested": {"cpuset": "0", "cpus": None}},
        {"name": "s2", "role": "server for member2", "limits_requested": {"cpuset": None, "cpus": None}},
    ]
    assert [r["server_cpuset"] for r in member_rows(meta)] == ["0", "any"]


def an_iteration(**changes) -> dict:
    it = {
        "own_cpu_cores": 0.5,
        "iteration": 1,
        "start": 10.0,
        "end": 12,
        "exit_code": 0,
        "status": "ok",
        "stdout": "member1-L/iter0001.out",
        "stderr": "member1-L/iter0001.err",
        "in_overlap": True,
    }
    return {**it, **changes}


def test_an_iteration_round_trips_and_keeps_its_numbers_as_written():
    for d in (an_iteration(), {k: v for k, v in an_iteration().items() if k != "own_cpu_cores"}):
        it = PairIteration.from_json(d, "here")
        assert it.to_json() == d and list(it.to_json()) == list(d)
        assert PairIteration.from_json(it.to_json(), "here") == it
    assert isinstance(PairIteration.from_json(an_iteration(), "here").end, int)  # not made a float


@pytest.mark.parametrize("run", ["pairs-case3b-v0", "pairs-case1-end-v0"])
def test_a_saved_runs_fields_read_and_write_back_unchanged(run):
    saved = json.loads((SAVED / run / "meta.json").read_text())
    results = PairResults.from_json(saved)
    # The old key `iterations` holds the records; the type calls them iteration_records.
    first = results.members[0]
    assert len(first.iteration_records) == len(saved["members"][0]["iterations"])
    assert isinstance(first.iteration_records[0], PairIteration)
    assert results.n_iterations == len(results.iteration_records)
    assert results.to_json() == {
        k: saved[k] for k in ("overlap", "members", "stopping", "n_iterations", "n_failed")
    }
    assert PairResults.from_json(results.to_json()) == results
    member = PairMember.from_json(saved["members"][0], "here")
    assert member.to_json() == saved["members"][0]


def test_a_bad_iteration_names_the_member_the_iteration_and_the_field():
    saved = json.loads((SAVED / "pairs-case3b-v0" / "meta.json").read_text())
    del saved["members"][1]["iterations"][0]["status"]
    with pytest.raises(RecordError, match=r"f\.json members\[1\] iterations\[0\]: field 'status' is missing"):
        PairResults.from_json(saved, "f.json")
    saved["members"][1]["iterations"][0] |= {"status": "ok", "in_overlap": "yes"}
    with pytest.raises(RecordError, match=r"field 'in_overlap' is 'yes'; expected bool"):
        PairResults.from_json(saved, "f.json")
    with pytest.raises(RecordError, match=r"field 'members' is missing; expected list"):
        PairResults.from_json({"settings": {}}, "f.json")
    with pytest.raises(RecordError, match=r"field 'settings.pair' is missing; expected str"):
        PairKey.from_settings({"case": "1"}, "f.json")


def test_execute_writes_the_typed_results_of_what_the_loops_recorded(tmp_path):
    """A Case 3b run's results from its members' iterations.tsv: the overlap, failures and the
    old shape of meta.json (iterations under `iterations`)."""
    loops = {
        "member1-L": "1\t100.0\t108.5\t0\t1000000000\t9000000000\n2\t108.5\t117\t137\n",
        "member2-S": "1\t101\t110\t0\n2\t110\t119.5\t1\n",
    }
    for d, text in loops.items():
        (tmp_path / d).mkdir()
        (tmp_path / d / "iterations.tsv").write_text(text)
    (tmp_path / "member1-L" / "limits.txt").write_text("cpuset=0\n")
    s = {"case": "3b", "pair": "L+S", "iteration_timeout_s": 60, "window_s": 20}
    ctx = types.SimpleNamespace(settings=s, outdir=tmp_path, events=[])
    out = execute.CaseRun(ctx).results()
    assert list(out) == ["overlap", "members", "stopping", "n_iterations", "n_failed"]
    assert out["overlap"] == {"start": 101.0, "end": 117.0, "window_s": 20}
    assert (out["n_iterations"], out["n_failed"]) == (4, 2)
    first = out["members"][0]
    assert first["limits_read_back"] == {"cpuset": "0"} and first["iterations"][0]["own_cpu_cores"] == 8 / 8.5
    assert [it["in_overlap"] for m in out["members"] for it in m["iterations"]] == [False, True, True, False]
    assert PairResults.from_json(out).to_json() == out
