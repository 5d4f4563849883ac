"""Every microservice's parser on real outputs of its image and on broken ones
(tests/fixtures/<id>/, see tests/fixtures/README-parsers.md): a number only from a
complete, checked output; otherwise a ParseError whose text is the sample's status."""

import math
from pathlib import Path

import pytest
from conftest import REPO
from interference import parsers
from interference.core.microservices import registry

FIXTURES = REPO / "tests" / "fixtures"
IDS = ("L", "S", "B", "NS", "NR", "Y", "P", "HP", "X", "Q")
# The bubble and the probe declare a metric per resource; one run gives its resource's only.
ONE_RESOURCE_PER_RUN = ("X", "Q")

# (id, fixture) -> the metrics it must give
GOOD = {
    ("L", "ok"): {"gflops": 34.3619},
    ("S", "ok"): {"copy": 36223.5, "scale": 37596.4, "add": 38204.3, "triad": 34430.5},
    ("B", "ok"): {
        "block_output": 591836.0,
        "block_input": 2087611.0,
        "block_rewrite": 607575.0,
        "random_seeks": 30517.0,
    },
    ("B", "ok_files16"): {
        "block_output": 1203656.0,
        "block_input": 2043951.0,
        "block_rewrite": 661388.0,
        "random_seeks": 21336.0,
    },
    ("NS", "ok"): {"throughput": 11806.885660007601},
    ("NR", "ok"): {"transactions": 20713 / 1.550, "latency": 74.821},
    ("Y", "ok"): {"computation_time": 0.046178, "total_time": 0.049119},
    ("Y", "ok_1m"): {"computation_time": 0.640557, "total_time": 0.663918},
    ("P", "ok"): {"execution_time": 0.0107},
    ("HP", "ok"): {"transfer_rate": 2632.85, "requests": 13215.85, "time_per_request": 0.076},
    ("X", "ok"): {"memory_rate": 1929.020861},
    ("Q", "ok"): {"cpu_rate": 315.48977},
    ("Q", "ok_disk"): {"disk_rate": 713.924085},
    ("Q", "ok_network"): {"network_rate": 7.9938641200261324},
}

ALL_PLUS = "bonnie++ reported +++++ for block_output, block_input, block_rewrite, random_seeks"

# (id, fixture) -> the status it must become
BAD = {
    ("P", "truncated_cut"): "truncated output",
    ("P", "empty"): "empty output",
    ("P", "no_events_edited"): "no event ran",
    ("L", "oom_killed"): "empty output",
    ("L", "residual_failed_edited"): "residual check failed",
    ("L", "garbled_edited"): "garbled output",
    ("L", "truncated_cut"): "truncated output",
    ("S", "validation_failed_edited"): "validation failed",
    ("S", "garbled_edited"): "garbled output",
    ("S", "truncated_cut"): "truncated output",
    ("S", "empty"): "empty output",
    ("B", "plus_all_256mb"): ALL_PLUS,
    ("B", "csv_header_x2_256mb"): ALL_PLUS,
    ("B", "size_below_twice_ram"): "empty output",
    ("B", "garbled_edited"): "garbled output",
    ("B", "truncated_cut"): "truncated output",
    ("B", "not_csv"): "garbled output",
    ("NS", "no_server"): "iperf3 error: unable to connect to server: Connection refused",
    ("NS", "unknown_host"): "iperf3 error: unable to connect to server: Name or service not known",
    ("NS", "server_busy"): "iperf3 error: the server is busy running a test. try again later",
    ("NS", "server_killed"): "iperf3 error: control socket has closed unexpectedly",
    ("NS", "truncated_cut"): "truncated output",
    ("NS", "garbled"): "garbled output",
    ("NS", "empty"): "empty output",
    ("NR", "no_server"): "sockperf error: Can`t connect socket (errno=111 Connection refused)",
    ("NR", "server_killed"): "sockperf error: A connection was forcibly closed by a peer (errno=0 Success)",
    ("NR", "unknown_host"): "empty output",
    ("NR", "truncated_cut"): "truncated output",
    ("NR", "garbled"): "garbled output",
    ("Y", "oom_killed"): "empty output",
    ("Y", "check_failed_edited"): "pi digits check failed",
    ("Y", "short_digits_edited"): "pi wrote 99998 of 100000 digits",
    ("Y", "garbled_edited"): "garbled output",
    ("Y", "truncated_cut"): "truncated output",
    ("HP", "no_server"): "ab error: apr_socket_recv: Connection refused (111)",
    ("HP", "failed_edited"): "3 failed and 0 non-2xx of 13216 requests",
    ("HP", "truncated_cut"): "truncated output",
    ("HP", "empty"): "empty output",
    ("X", "truncated_cut"): "truncated output",
    ("X", "iperf3_error_edited"): "iperf3 error: unable to connect to server: Connection refused",
    ("X", "no_stressor_edited"): "no stress-ng vm stressor in output",
    ("Q", "empty"): "empty output",
    ("Q", "truncated_cut"): "truncated output",
    ("Q", "garbled"): "garbled output",
    ("Q", "fio_error_edited"): "fio error 28",
}


def test_one_too_fast_bonnie_test_voids_only_its_metric():
    values = run_parser("B", "plus_seeks_edited")
    assert isinstance(values.pop("random_seeks"), parsers.ParseError)
    assert (
        str(run_parser("B", "plus_seeks_edited")["random_seeks"])
        == "bonnie++ reported +++++ for random_seeks"
    )
    assert set(values) == {"block_output", "block_input", "block_rewrite"}
    assert all(v > 0 for v in values.values())


def run_parser(ms_id: str, name: str) -> dict:
    parse = parsers.get(registry()[ms_id].parser)
    out = (FIXTURES / ms_id / f"{name}.out").read_text(errors="replace")
    err = (FIXTURES / ms_id / f"{name}.err").read_text(errors="replace")
    return parse(out, err)


@pytest.mark.parametrize("ms_id,name", sorted(GOOD), ids=lambda v: v)
def test_good_output_gives_every_metric(ms_id, name):
    values = run_parser(ms_id, name)
    assert values == pytest.approx(GOOD[(ms_id, name)])
    declared = {m.name for m in registry()[ms_id].metrics}
    if ms_id in ONE_RESOURCE_PER_RUN:
        assert len(values) == 1 and set(values) <= declared
    else:
        assert set(values) == declared
    assert all(math.isfinite(v) and v > 0 for v in values.values())


@pytest.mark.parametrize("ms_id,name", sorted(BAD), ids=lambda v: v)
def test_bad_output_becomes_a_status(ms_id, name):
    with pytest.raises(parsers.ParseError) as e:
        run_parser(ms_id, name)
    assert str(e.value) == BAD[(ms_id, name)]


def test_every_fixture_is_covered_and_every_microservice_tested():
    on_disk = {(p.parent.name, p.stem) for i in IDS for p in (FIXTURES / i).glob("*.out")}
    assert on_disk == set(GOOD) | set(BAD) | {("B", "plus_seeks_edited")}
    assert set(IDS) == set(registry())
    for i in IDS:
        assert (i, "ok") in GOOD
        assert any(k[0] == i for k in BAD)


@pytest.mark.parametrize("ms_id", IDS)
def test_empty_and_whitespace_output(ms_id):
    parse = parsers.get(registry()[ms_id].parser)
    for out in ("", "\n  \n"):
        with pytest.raises(parsers.ParseError) as e:
            parse(out, "")
        assert str(e.value) == "empty output"


@pytest.mark.parametrize("ms_id", IDS)
def test_every_prefix_of_a_good_output_is_refused(ms_id):
    """An iteration cut off anywhere (killed, disk full) never yields a number."""
    parse = parsers.get(registry()[ms_id].parser)
    out = (FIXTURES / ms_id / "ok.out").read_text()
    step = max(1, len(out) // 200)
    for end in range(0, len(out) - 1, step):
        with pytest.raises(parsers.ParseError):
            parse(out[:end], "")


def test_bonnie_takes_fields_by_position_not_by_header():
    """The 48-name header would put put_block at field 9; 2.00a's data lines have it at 11."""
    header, line = (FIXTURES / "B" / "csv_header_x2_256mb.out").read_text().splitlines()[:2]
    assert len(header.split(",")) == 48 and len(line.split(",")) == 50
    ok = (FIXTURES / "B" / "ok.out").read_text().split(",")
    assert ok[11] == "591836" and ok[17] == "2087611" and ok[13] == "607575" and ok[19] == "30517"


def test_bonnie_unknown_csv_format_is_refused():
    out = (FIXTURES / "B" / "ok.out").read_text().replace("1.98,", "1.97,", 1)
    with pytest.raises(parsers.ParseError, match="unexpected bonnie\\+\\+ CSV format '1.97'"):
        parsers.get("bonnie")(out, "")


def test_iperf3_error_key_wins_over_numbers():
    import json

    doc = json.loads((FIXTURES / "NS" / "ok.out").read_text())
    doc["error"] = "interrupt - the client has terminated"
    with pytest.raises(parsers.ParseError, match="iperf3 error: interrupt - the client has terminated"):
        parsers.get("iperf3")(json.dumps(doc), "")


def test_sockperf_colour_codes_are_ignored():
    out = (FIXTURES / "NR" / "ok.out").read_text()
    assert "\x1b[" in out  # sockperf colours its summary lines
    assert parsers.get("sockperf")(out.replace("\x1b[2;35m", "").replace("\x1b[0m", ""), "") == (
        parsers.get("sockperf")(out, "")
    )


def test_fixture_files_exist_in_pairs():
    for i in IDS:
        outs = {p.stem for p in (FIXTURES / i).glob("*.out")}
        errs = {p.stem for p in (FIXTURES / i).glob("*.err")}
        assert outs == errs, i
        assert Path(FIXTURES / i).is_dir()
