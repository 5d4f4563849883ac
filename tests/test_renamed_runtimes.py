"""A runtime renamed (core/runtime_names.py: `host` -> `baremetal`): a config naming the old name
is refused with the new one, a results tree made before is moved whole (nothing lost, nothing run
again), and a saved session's definition reads with the new name."""

import csv
import json
import os

import pytest
from interference.core.runtime_names import RENAMED, renamed_config
from interference.stores import renamed_runtimes


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def old_tree(results):
    """Runs of the bare-metal runtime under its old name, and a Docker network run whose mode,
    also called host, must stay as it is."""
    settings = {"host": "h", "runtime": "host", "study": "pingpong", "key": "reference", "repetition": 1}
    meta = write(
        results / "raw/h/host/pingpong/reference/rep1/meta.json",
        json.dumps({"study": "pingpong", "settings": settings, "started": 1.0, "finished": 5.0}, indent=1),
    )
    write(results / "raw/h/host/pingpong/reference/rep1/tests/i0001-m10.out", "ab output\n")
    image = write(
        results / "images/h/host/HP.json", json.dumps({"image": "HP", "runtime": "host", "id": "rootfs:x"})
    )
    write(results / "parsed/h/host/pingpong/reference/rep1.tsv", "host\truntime\nh\thost\n")
    write(results / "logs/run/h/host/pingpong/reference/rep1.log", "log\n")
    docker = {**settings, "runtime": "docker", "study": "network", "key": "NS/to-host/host"}
    mode = write(
        results / "raw/h/docker/network/NS/to-host/host/rep1/meta.json", json.dumps({"settings": docker})
    )
    (results / "durations").mkdir()
    with (results / "durations/h.tsv").open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["settings", "study", "runtime", "key", "repetition", "seconds", "finished"])
        for s in (settings, docker):
            w.writerow([json.dumps(s, sort_keys=True), s["study"], s["runtime"], s["key"], 1, "4.00", "5"])
    # Older than now, as a tree made before is: the rewritten meta.json must come out newer than its image.
    for p in (meta, image):
        os.utime(p, (1_000_000, 1_000_000))
    return mode


def test_an_old_results_tree_is_moved_to_the_new_name_whole(tmp_path):
    results = tmp_path / "results"
    mode = old_tree(results)
    said = renamed_runtimes.migrate(results, RENAMED)
    assert any("1 image records, 1 run records and 1 run ledgers" in line for line in said), said
    new = results / "raw/h/baremetal/pingpong/reference/rep1"
    assert (
        not (results / "raw/h/host").exists() and (new / "tests/i0001-m10.out").read_text() == "ab output\n"
    )
    for tree in ("parsed", "logs/run", "images"):
        assert not (results / tree / "h/host").exists() and (results / tree / "h/baremetal").is_dir(), tree
    meta = json.loads((new / "meta.json").read_text())
    assert meta["settings"]["runtime"] == "baremetal" and meta["finished"] == 5.0  # the rest as it was
    image = results / "images/h/baremetal/HP.json"
    assert json.loads(image.read_text())["runtime"] == "baremetal"
    assert (new / "meta.json").stat().st_mtime >= image.stat().st_mtime  # the run is not run again
    # The Docker run's mode folder named host is no runtime: untouched.
    assert json.loads(mode.read_text())["settings"]["runtime"] == "docker"
    with (results / "durations/h.tsv").open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert [r["runtime"] for r in rows] == ["baremetal", "docker"]
    assert json.loads(rows[0]["settings"])["runtime"] == "baremetal"
    assert json.loads(rows[1]["settings"])["key"] == "NS/to-host/host"
    # Once is enough: a second invocation finds nothing to move.
    assert renamed_runtimes.migrate(results, RENAMED) == []


def test_a_tree_with_runs_under_both_names_keeps_every_run(tmp_path):
    """Runs under the new name already (a rerun made after the rename) and under the old: each
    run the new folder lacks is moved in; one it has stays in the old folder, never overwritten."""
    results = tmp_path / "results"
    old_tree(results)
    write(
        results / "raw/h/baremetal/pingpong/reference/rep1/meta.json",
        '{"settings": {"runtime": "baremetal"}}',
    )
    write(results / "raw/h/host/pingpong/loopback/rep1/meta.json", '{"settings": {"runtime": "host"}}')
    renamed_runtimes.migrate(results, RENAMED)
    assert json.loads((results / "raw/h/baremetal/pingpong/loopback/rep1/meta.json").read_text())[
        "settings"
    ] == {"runtime": "baremetal"}
    assert (results / "raw/h/host/pingpong/reference/rep1/meta.json").exists()  # kept, not overwritten
    assert json.loads((results / "raw/h/baremetal/pingpong/reference/rep1/meta.json").read_text())[
        "settings"
    ] == {"runtime": "baremetal"}


def test_a_config_naming_the_old_runtime_is_refused_with_the_new_name():
    from interference.steps.config import ConfigError, validate

    with pytest.raises(ConfigError) as e:
        validate({"runtimes": ["host"], "studies": {"pingpong": {}}})
    assert "'host'" in str(e.value) and "'baremetal'" in str(e.value) and "runtimes" in str(e.value)


def test_a_saved_sessions_definition_reads_with_the_new_names():
    then = {"host": "fog", "runtimes": ["host", "docker"], "runtime_options": {"host": {"rootfs_dir": "/r"}},
            "studies": {"pingpong": {"runtimes": ["host"], "layers": ["host"]}}}  # fmt: skip
    assert renamed_config(then) == {
        "host": "fog",  # the machine's key and a layer called so are no runtimes
        "runtimes": ["baremetal", "docker"],
        "runtime_options": {"baremetal": {"rootfs_dir": "/r"}},
        "studies": {"pingpong": {"runtimes": ["baremetal"], "layers": ["host"]}},
    }
