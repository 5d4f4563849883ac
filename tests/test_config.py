"""Config validation: good configs pass with defaults filled; bad ones fail before anything
runs, in one paragraph naming the key and the bad value (or the study and runtime)."""

import copy
import subprocess
import sys
import time

import pytest
from conftest import REPO, SNAKEMAKE
from interference.steps.config import ConfigError, load, validate

GOOD = {"studies": {"pairs": {"microservices": ["L", "S"]}}}


def with_pairs(**patch) -> dict:
    cfg = copy.deepcopy(GOOD)
    cfg["studies"]["pairs"].update(patch)
    return cfg


@pytest.mark.parametrize(
    "name", ["ci", "config", "paper", "runtimes", "apptainer-ci", "adaptive", "paper004-two-hosts"]
)
def test_shipped_configs_are_valid(name):
    cfg = load(REPO / "config" / f"{name}.yaml")
    pairs = cfg["studies"]["pairs"]
    assert pairs["microservices"]
    assert set(pairs["window_s"]) == {"2", "3a", "3b", "2-3a"}


def test_defaults_are_filled():
    cfg = validate(GOOD)
    pairs = cfg["studies"]["pairs"]
    assert cfg["runtimes"] == ["docker"]
    assert pairs["runtimes"] == ["docker"]  # a study runs on the top-level runtimes by default
    assert cfg["runtime_options"] == {"docker": {}}
    assert pairs["cases"] == ["1", "2", "3a", "3b"]
    assert pairs["limits"] == {"cpu_mode": "cpuset", "cpus": 1, "memory": "2g"}
    assert pairs["sizes"]["L"]["n"] == 2000  # declared in containers/linpack/microservice.yaml
    assert cfg["host"]  # defaults to the hostname


@pytest.mark.parametrize(
    "patch, key, value",
    [
        ({"microservices": ["L", "ZZ"]}, "studies.pairs.microservices[1]", "'ZZ'"),
        ({"cases": ["1", "4"]}, "studies.pairs.cases[1]", '"4"'),
        ({"runtimes": ["rkt"]}, "studies.pairs.runtimes[0]", "'rkt'"),
        ({"iterations": 0}, "studies.pairs.iterations", "0"),
        ({"window_s": {"2": 0}}, "studies.pairs.window_s.2", "0"),
        ({"window_s": {"3a": -5}}, "studies.pairs.window_s.3a", "-5"),
        ({"limits": {"memory": "lots"}}, "studies.pairs.limits.memory", '"lots"'),
        ({"sizes": {"L": {"n": "big"}}}, "studies.pairs.sizes.L.n", '"big"'),
        ({"sizes": {"L": {"m": 3}}}, "studies.pairs.sizes.L", "'m'"),
        ({"limits": {"cpus": 2}}, "studies.pairs.limits.cpus", "2"),
        ({"pairs": ["L+Q"]}, "studies.pairs.pairs[0]", "'L+Q'"),
        ({"pairs": ["LS"]}, "studies.pairs.pairs[0]", "'LS'"),
        ({"adaptive": {"target_ci": 0.02}}, "studies.pairs.adaptive", "'max_iterations'"),
        (
            {"adaptive": {"target_ci": 0.02, "max_iterations": 3}},
            "studies.pairs.adaptive.max_iterations",
            "3",
        ),
        (
            {"adaptive": {"min_overlap_samples": 5, "window_cap_s": 10}},
            "studies.pairs.adaptive.window_cap_s",
            "10",
        ),
    ],
)
def test_bad_values_name_key_and_value(patch, key, value):
    with pytest.raises(ConfigError) as e:
        validate(with_pairs(**patch))
    msg = str(e.value)
    assert key in msg and value in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    "cfg, needles",
    [
        ({**GOOD, "runtimes": ["rkt"]}, ["runtimes[0]", "'rkt'", "known: "]),
        ({"studies": {"pairz": {}}}, ["studies.pairz", "unknown study", "pairs"]),
        ({**GOOD, "runtime_options": {"docker": {"colour": 1}}}, ["runtime_options.docker", "colour"]),
        ({"microservices": ["L"]}, ["studies", "belong under studies.pairs"]),
    ],
)
def test_unknown_names_are_refused(cfg, needles):
    with pytest.raises(ConfigError) as e:
        validate(cfg)
    for needle in needles:
        assert needle in str(e.value), str(e.value)


def test_a_study_needing_what_a_runtime_lacks_is_refused():
    # Bare metal has no private networks; NS measures against a server reached by name.
    with pytest.raises(ConfigError) as e:
        validate(with_pairs(microservices=["L", "NS"], runtimes=["baremetal"]))
    msg = str(e.value)
    assert "'pairs'" in msg and "'baremetal'" in msg and "private networks" in msg, msg
    validate(with_pairs(microservices=["L", "S"], runtimes=["baremetal"]))  # no server: fine


def test_yaml_syntax_error_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("studies:\n  pairs:\n    microservices: [L, S\n    cases: 1\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml, line \d+, column \d+: not valid YAML"):
        load(bad)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("studies: {pairs: {microservices: [L, ZZ]}}\n", "'ZZ'"),
        ("studies: {pairs: {microservices: [L], iterations: 0}}\n", "iterations"),
        ("studies: {pairs: {microservices: [L, NS], runtimes: [baremetal]}}\n", "private networks"),
        ("studies: {nope: {}}\n", "unknown study"),
        ("studies: {pairs: {microservices: [L\n", "YAML"),
    ],
)
def test_snakemake_stops_before_anything_runs(tmp_path, text, needle):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    t0 = time.time()
    r = subprocess.run(
        [
            SNAKEMAKE,
            "-s",
            str(REPO / "Snakefile"),
            "-d",
            str(tmp_path / "work"),
            "--cores",
            "1",
            "raw",
            "--configfile",
            str(cfg),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert needle in r.stdout + r.stderr
    assert not (tmp_path / "work" / "results").exists()
    print(f"rejected in {time.time() - t0:.1f} s")


def test_config_checker_names_the_yaml_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("studies:\n  pairs: {microservices: [L\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "interference.steps.config",
            str(bad),
            str(REPO / "config/ci.yaml"),
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "scripts")},
    )
    assert r.returncode == 2
    assert "bad.yaml, line" in r.stderr and "column" in r.stderr
    assert "ci.yaml: valid" in r.stdout


def test_an_unavailable_runtime_stops_snakemake_before_any_image(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text('studies: {pairs: {microservices: [L], cases: ["1"]}}\n')
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "--cores", "1", "raw"]
        + ["--configfile", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "DOCKER_HOST": "unix:///nonexistent.sock"},
    )
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "Nothing was built or run: runtime 'docker'" in out and "dockerd" in out
    assert not (tmp_path / "results").exists()


def test_bonnie_needs_twice_the_memory_unless_direct_io():
    from interference.studies import StudyConfigError
    from interference.studies.pairs import PairsStudy

    buffered = {"file_size_mb": 512, "ram_mb": 256, "direct_io": False}
    with pytest.raises(StudyConfigError, match=r"ram_mb has the value 256, below limits.memory .*direct_io"):
        PairsStudy._check_bonnie(buffered, "1g")
    PairsStudy._check_bonnie({**buffered, "direct_io": True}, "1g")  # O_DIRECT: no page cache to outgrow
    with pytest.raises(StudyConfigError, match="twice sizes.B.ram_mb"):
        PairsStudy._check_bonnie({**buffered, "file_size_mb": 300, "direct_io": True}, "1g")


def test_a_config_includes_others_and_their_runs_stay_the_same_runs():
    """The default's pair study with paper 003's ping-pong included: both studies, the runtimes
    united, and every ping-pong run with exactly the settings config/paper003-ci.yaml gives it
    alone (the same meta.json, so neither config reruns the other's runs)."""
    from interference import studies

    cfg = validate({"include": ["config/paper003-ci.yaml"], "studies": {"pairs": {"microservices": ["L"], "cases": ["1"]}}},
                   machine=False)  # fmt: skip
    alone = load(REPO / "config/paper003-ci.yaml")
    assert set(cfg["studies"]) == {"pairs", "pingpong"} and {"docker", "baremetal"} <= set(cfg["runtimes"])
    assert cfg["studies"]["pairs"]["runtimes"] == ["docker"]

    def settings(c):
        part = c["studies"]["pingpong"]
        return {
            (rt, r.key): studies.run_settings(c, "pingpong", rt, r.key, r.repetition)
            for rt in part["runtimes"]
            for r in studies.get("pingpong").runs_on(part, rt)
        }

    assert settings(cfg) == settings(alone) and settings(cfg)
    with pytest.raises(ConfigError, match="include names 'config/none.yaml', which is no file here"):
        validate({"include": ["config/none.yaml"], "studies": {}}, machine=False)


@pytest.mark.parametrize(
    "text", ["root:x:0:0:root:/root:/bin/bash\n", "- a\n- b\n", "studies: [pairs]\n", "a: [\n"]
)
def test_an_included_file_that_is_no_config_is_named(tmp_path, text):
    other = tmp_path / "passwd"
    other.write_text(text)
    with pytest.raises(ConfigError, match=f"include names {other}, which is no"):
        validate({"include": [str(other)], "studies": {}}, machine=False)
