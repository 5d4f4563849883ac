"""The case matrix, limits per case, overlap marking and container command lines."""

from pathlib import Path

import pytest
from interference.core.loop import loop_command, read_iterations, status_of
from interference.runtimes import ContainerSpec
from interference.runtimes.docker import DockerRuntime
from interference.steps.config import validate
from interference.studies.pairs import cases


def test_pairs_are_unordered_with_self_pairs():
    assert cases.pairs(["L", "S", "B"]) == [
        ("L", "L"),
        ("L", "S"),
        ("L", "B"),
        ("S", "S"),
        ("S", "B"),
        ("B", "B"),
    ]
    assert len(cases.pairs(["L", "S", "B", "NS", "NR", "Y"])) == 21


def test_runs_cover_the_matrix():
    cfg = validate({"studies": {"pairs": {"microservices": ["L", "S"], "repetitions": 2}}})["studies"][
        "pairs"
    ]
    runs = cases.runs(cfg)
    # 2 singles in case 1 + 3 pairs in each of 3 concurrent cases, twice.
    assert len(runs) == 2 * (2 + 3 * 3)
    assert {"runtime": "docker", "case": "3b", "pair": "L+S", "repetition": 2} in runs
    assert all(r["pair"] in ("L", "S") for r in runs if r["case"] == "1")


def test_images_needed_and_used():
    cfg = validate({"studies": {"pairs": {"microservices": ["L", "S"]}}})["studies"]["pairs"]
    assert cases.images_needed(cfg) == ["base", "L", "S", "L+S"]
    assert cases.image_for("2", ["L", "S"]) == ["L+S"]
    assert cases.image_for("2", ["L", "L"]) == ["L"]
    assert cases.image_for("3b", ["L", "S"]) == ["L", "S"]


def test_limits_per_case():
    lim = {"cpu_mode": "cpuset", "cpus": 1, "memory": "2g"}
    assert cases.limits_for("1", 0, lim, [0, 1]) == {"memory": "2g", "cpuset": "0"}
    assert cases.limits_for("3b", 1, lim, [0, 1]) == {"memory": "2g", "cpuset": "1"}  # disjoint cores
    # A host confined to other cores (an edge node on core 1; cores 2, 5, 6): its own, in order.
    assert cases.limits_for("1", 0, lim, [1])["cpuset"] == "1"
    assert cases.limits_for("3b", 1, {**lim, "cpus": 2}, [2, 5, 6, 7])["cpuset"] == "6-7"
    assert cases.limits_for("3b", 0, {**lim, "cpus": 2}, [2, 5, 6, 7])["cpuset"] == "2,5"
    assert cases.limits_for("2", 0, lim) == {} and cases.limits_for("3a", 1, lim) == {}
    assert cases.limits_for("3b", 1, {**lim, "cpus": 2}, range(4))["cpuset"] == "2-3"
    assert cases.limits_for("3b", 0, {**lim, "cpu_mode": "quota"}) == {"memory": "2g", "cpus": 1.0}


def _its(*spans):
    return [{"start": a, "end": b} for a, b in spans]


def test_overlap_marks_what_ran_alone():
    a = _its((0, 4), (4, 8), (8, 12))  # a's last iteration ends after b stopped
    b = _its((1, 3), (3, 5), (5, 9))  # b's first starts after a started
    lo, hi = cases.mark_overlap([a, b])
    assert (lo, hi) == (1, 9)
    assert [i["in_overlap"] for i in a] == [False, True, False]
    assert [i["in_overlap"] for i in b] == [True, True, True]


def test_overlap_with_a_member_that_never_ran():
    a, b = _its((0, 1)), []
    assert cases.mark_overlap([a, b]) == (None, None)
    assert a[0]["in_overlap"] is False


def test_docker_command_construction():
    spec = ContainerSpec(
        name="c1",
        image="sha256:abc",
        command=["microservice-loop", "L"],
        env={"LINPACK_N": "100"},
        cpuset="1",
        memory="2g",
        binds=[("/tmp/x", "/results")],
        volumes=[("v1", "/scratch")],
        network="net1",
        labels={"interference.run": "r1"},
    )
    argv = DockerRuntime().run_argv(spec)
    assert argv[:5] == ["docker", "run", "--detach", "--name", "c1"]
    joined = " ".join(argv)
    for part in [
        "--label interference.run=r1",
        "--cpuset-cpus 1",
        "--memory 2g --memory-swap 2g",
        "--network net1",
        "--volume /tmp/x:/results",
        "--volume v1:/scratch",
        "--env LINPACK_N=100",
        "sha256:abc microservice-loop L",
    ]:
        assert part in joined
    assert "--cpus" not in argv
    quota = DockerRuntime().run_argv(ContainerSpec(name="c", image="i", command=[], cpus=1.0))
    assert "--cpus" in quota and quota[quota.index("--cpus") + 1] == "1"


def test_loop_command():
    assert loop_command("S", "member2-S", 1, 100.0, "until", 160.0, 30) == [
        "microservice-loop",
        "S",
        "/results/member2-S",
        "1",
        "100.000",
        "until",
        "160.000",
        "30",
    ]
    assert loop_command("L", "member1-L", 3, 5.0, "count", 1, 30)[5:7] == ["count", "1"]


@pytest.mark.parametrize(
    "code, secs, status",
    [
        (0, 1, "ok"),
        (124, 30, "timeout"),
        (137, 31, "timeout"),
        (137, 2, "killed (exit 137, out of memory?)"),
        (5, 1, "exit 5"),
    ],
)
def test_status_of(code, secs, status):
    assert status_of(code, secs, 30) == status


def test_read_iterations(tmp_path):
    d = tmp_path / "member1-L"
    d.mkdir()
    (d / "iterations.tsv").write_text("1\t10.5\t11.0\t0\n2\t11.0\t12.5\t5\n")
    its = read_iterations(d, 60)
    assert [i["status"] for i in its] == ["ok", "exit 5"]
    assert its[1]["stdout"] == "member1-L/iter0002.out"


def test_unreachable_engine_says_which_and_how_to_start(monkeypatch):
    from interference.runtimes import RuntimeUnavailable

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(RuntimeUnavailable) as e:
        DockerRuntime().describe()
    assert "Docker engine does not answer" in str(e.value) and "dockerd" in str(e.value)


def test_runner_fails_cleanly_without_engine(tmp_path, monkeypatch, capsys):
    from interference.steps import runner

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    img = tmp_path / "L.json"
    img.write_text('{"image": "L", "ref": "interference/l:x", "id": "sha256:x"}')
    settings = '{"host": "h", "runtime": "docker", "case": "1", "pair": "L", "repetition": 1}'
    assert (
        runner.main(
            [
                "--study",
                "pairs",
                "--settings",
                settings,
                "--images",
                str(img),
                "--meta",
                str(tmp_path / "m/meta.json"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "Docker engine does not answer" in err and "Start it with" in err
    assert not (tmp_path / "m").exists()


def test_adaptive_precision_is_the_relative_ci_half_width_of_each_mean():
    from interference.studies.pairs.adaptive import case1_done, relative_half_widths

    p = relative_half_widths({"gflops": [10.0, 10.2, 9.8, 10.0], "one": [5.0], "zero": [0.0, 0.0]})
    # t(0.975, 3) = 3.182; sd 0.1633, n 4: half-width 0.2598 of a mean of 10.
    assert p["gflops"] == pytest.approx(0.02598, rel=1e-3) and p["one"] is None and p["zero"] is None
    assert case1_done({"a": 0.01, "b": 0.019}, 0.02) and not case1_done({"a": 0.01, "b": None}, 0.02)
    assert not case1_done({}, 0.02)


def test_adaptive_window_moves_its_end_until_each_member_has_its_samples(tmp_path):
    import threading
    import time

    from interference.core.loop import START_FILE, write_start_file
    from interference.studies.pairs.adaptive import SLACK_S, extend_window, read_iterations

    dirs = [tmp_path / "member1-L", tmp_path / "member2-S"]
    for d in dirs:
        d.mkdir()
    start_at, end = write_start_file(tmp_path, 2)
    stop = threading.Event()

    def member(d: Path, pace: float, late: float):  # a loop writing one iteration every `pace` seconds
        time.sleep(max(0.0, start_at + late - time.time()))
        i = 0
        while not stop.is_set():
            t0 = time.time()
            time.sleep(pace)
            i += 1
            with open(d / "iterations.tsv", "a") as f:
                f.write(f"{i}\t{t0}\t{time.time()}\t0\n")

    # The slow member starts first: its first iteration begins before the overlap and must not count.
    threads = [
        threading.Thread(target=member, args=(d, p, late)) for d, p, late in zip(dirs, (0.2, 1.0), (0.5, 0))
    ]
    for t in threads:
        t.start()
    try:
        got = extend_window(tmp_path, dirs, start_at, end, {"min_overlap_samples": 4, "window_cap_s": 20}, 60)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert got["stopped_by"] == "samples reached" and min(got["counts_at_close"]) >= 4
    its = [read_iterations(d, 60) for d in dirs]
    cases.mark_overlap(its)
    assert min(sum(i["in_overlap"] for i in m) for m in its) >= 4  # what the study will count
    assert 2 < got["window_s"] <= 20 and got["extended_s"] > 0 and got["moves"]
    # The end moves to about when the slowest member's fourth counted iteration ended (its first,
    # begun before the other's, does not count), plus the slack, and at most one more move of it
    # (about 5 s in, so 6-7 s; 14 s when moves counted from the old end, whatever the load).
    overlap_start = max(min(i["start"] for i in m) for m in its)
    fourth = max(sorted(i["end"] for i in m if i["start"] >= overlap_start)[3] for m in its)
    assert start_at + got["window_s"] <= fourth + 2 * SLACK_S + 0.5, (got, fourth - start_at)
    assert (tmp_path / START_FILE).read_text().split() == [
        f"{start_at:.3f}",
        f"{start_at + got['window_s']:.3f}",
    ]
    # A cap shorter than the samples need: the window stops at the cap.
    capped = extend_window(tmp_path, dirs, time.time() - 10, time.time() + 0.5, {"min_overlap_samples": 99,
                           "window_cap_s": 12}, 60)  # fmt: skip
    assert capped["stopped_by"] == "window cap"


def test_only_the_configured_pairs_run_in_the_concurrent_cases():
    assert cases.pairs(["L", "S", "B"], ["S+L", "B+B"]) == [("L", "S"), ("B", "B")]
    cfg = {
        "runtimes": ["docker"],
        "cases": ["1", "2"],
        "repetitions": 1,
        "microservices": ["L", "S"],
        "pairs": ["S+L"],
    }
    assert [r["pair"] for r in cases.runs(cfg)] == ["L", "S", "L+S"]
    assert cases.images_needed(cfg) == ["base", "L", "S", "L+S"]


def test_a_triple_runs_in_the_unlimited_cases_and_in_3b_only_where_its_cores_are(monkeypatch):
    cfg = validate(
        {
            "studies": {
                "pairs": {
                    "microservices": ["L", "S", "NS"],
                    "pairs": ["S+L"],
                    "triples": ["NS+S+L"],
                    "cases": ["1", "2", "3a", "3b"],
                }
            }
        }  # fmt: skip
    )["studies"]["pairs"]
    assert cases.groups(cfg) == [("L", "S"), ("L", "S", "NS")]  # a triple's members in config order
    assert cases.images_needed(cfg) == ["base", "L", "S", "NS", "L+S", "L+S+NS"]
    assert cases.image_for("2", ["L", "S", "NS"]) == ["L+S+NS"] and cases.image_for("2", ["L"] * 3) == ["L"]

    def concurrent(cores):
        monkeypatch.setattr(cases.os, "sched_getaffinity", lambda pid: set(range(cores)))
        return [(r["case"], r["pair"]) for r in cases.runs(cfg) if r["case"] not in cases.ALONE_CASES]

    # Three containers of one core each: not on two cores (the pair still runs there).
    assert concurrent(2) == [("2", "L+S"), ("2", "L+S+NS"), ("3a", "L+S"), ("3a", "L+S+NS"), ("3b", "L+S")]
    assert ("3b", "L+S+NS") in concurrent(3)
    assert cases.limits_for("3b", 2, cfg["limits"], [0, 1, 2])["cpuset"] == "2"
    assert cases.fits("3b", 3, {**cfg["limits"], "cpu_mode": "quota"}, cores=2)
    # Extra runs of a triple's cell only where the cell runs.
    more = {**cfg, "extra_repetitions": {"3a/NS+L+S": 2, "3b/L+S+NS": 2}}
    monkeypatch.setattr(cases.os, "sched_getaffinity", lambda pid: {0, 1})
    extra = [(r["case"], r["pair"], r["repetition"]) for r in cases.runs(more) if r["repetition"] > 1]
    assert extra == [("3a", "L+S+NS", 2), ("3a", "L+S+NS", 3)]
    with pytest.raises(Exception, match="triples"):
        validate({"studies": {"pairs": {"microservices": ["L", "S"], "triples": ["L+S"]}}})
    with pytest.raises(Exception, match=r"triples\[0\].*NS is not among"):
        validate({"studies": {"pairs": {"microservices": ["L", "S"], "triples": ["L+S+NS"]}}})


def test_a_triples_mixed_case_puts_each_member_apart_once_beside_the_two_others_sharing():
    cfg = validate(
        {
            "studies": {
                "pairs": {
                    "microservices": ["L", "S", "NS"],
                    "triples": ["L+S+NS"],
                    "cases": ["1", "2-3a"],
                    "extra_repetitions": {"2-3a/NS+S+L": 1, "2-3a/L+NS+S": 1, "2-3a/L+S": 1},
                }
            }
        }  # fmt: skip
    )["studies"]["pairs"]
    runs = [(r["pair"], r["repetition"]) for r in cases.runs(cfg) if r["case"] == "2-3a"]
    # The first two share a container, the last runs apart; the extra run goes to the cell that
    # has L apart whatever order the two sharing are written in ("L+NS+S" has S apart).
    assert runs == [("S+NS+L", 1), ("L+NS+S", 1), ("L+S+NS", 1), ("S+NS+L", 2), ("L+NS+S", 2)]
    assert cases.layout("2-3a", 3) == [[0, 1], [2]] and cases.image_for("2-3a", ["S", "NS", "L"]) == [
        "S+NS",
        "L",
    ]
    assert cases.images_needed(cfg) == ["base", "L", "S", "NS", "S+NS", "L+NS", "L+S"]
    assert cases.limits_for("2-3a", 2, cfg["limits"]) == {}  # unlimited, like 2 and 3a
    assert cases.image_for("2-3a", ["L", "L", "S"]) == ["L", "S"]


DECIDED_TO_STARTED_S = 0.25  # the loop's check of the end to its reading of the time


def test_the_loop_starts_at_the_start_files_fraction_of_a_second_and_stops_at_its_end(tmp_path):
    """containers/base/microservice-loop itself, on this machine: two loops released by one start
    file whose epochs fall between whole seconds begin after the start (not at the whole second
    before it) and begin no iteration after the end."""
    import os
    import subprocess
    import time

    from conftest import REPO
    from interference.core.loop import START_FILE, move_window_end

    service = tmp_path / "services/X"
    service.mkdir(parents=True)
    (service / "run").write_text("#!/bin/sh\nsleep 0.2\n")
    (service / "run").chmod(0o755)
    loop = REPO / "containers/base/microservice-loop"
    env = {**os.environ, "MICROSERVICES_DIR": str(tmp_path / "services")}
    procs = []
    for d in ("member1-X", "member2-X"):
        # ID OUTDIR FIRST START until END TIMEOUT_S; the run's folder here, not the container's /results.
        argv = ["X", str(tmp_path / d), "1", f"@{tmp_path / START_FILE}", "until", "0", "10"]
        procs.append(subprocess.Popen(["sh", str(loop), *argv], env=env))
    start = int(time.time()) + 1.5  # half a second past a whole one
    move_window_end(tmp_path, start, start + 1.25)
    for p in procs:
        assert p.wait(timeout=30) == 0
    for d in ("member1-X", "member2-X"):
        its = read_iterations(tmp_path / d, 10)
        assert start <= its[0]["start"] < start + 0.5, (start, its[0])
        # An iteration's start is read after the loop found the end not reached: a few forks
        # later, 1.2 ms past the end once (2026-11-27, beside the other test process). A loop
        # comparing whole seconds would begin one up to 0.75 s after this end.
        assert its[-1]["start"] < start + 1.25 + DECIDED_TO_STARTED_S and len(its) >= 2, its
