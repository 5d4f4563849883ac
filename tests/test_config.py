"""Config validation: good configs pass with defaults filled; bad ones fail before anything
runs, in one paragraph naming the key and the bad value."""

import subprocess
import time

import pytest

from conftest import REPO, SNAKEMAKE
from interference.config import ConfigError, load, validate

GOOD = {"microservices": ["L", "S"]}


@pytest.mark.parametrize("name", ["ci", "config", "paper"])
def test_shipped_configs_are_valid(name):
    cfg = load(REPO / "config" / f"{name}.yaml")
    assert cfg["microservices"]
    assert set(cfg["window_s"]) == {"2", "3a", "3b"}


def test_defaults_are_filled():
    cfg = validate(GOOD)
    assert cfg["runtimes"] == ["docker"]
    assert cfg["cases"] == ["1", "2", "3a", "3b"]
    assert cfg["limits"] == {"cpu_mode": "cpuset", "cpus": 1, "memory": "2g"}
    assert cfg["sizes"]["L"]["n"] == 2000  # declared in containers/linpack/microservice.yaml
    assert cfg["host"]  # defaults to the hostname


@pytest.mark.parametrize(
    "patch, key, value",
    [
        ({"microservices": ["L", "X"]}, "microservices[1]", "'X'"),
        ({"cases": ["1", "4"]}, "cases[1]", '"4"'),
        ({"runtimes": ["rkt"]}, "runtimes[0]", "'rkt'"),
        ({"iterations": 0}, "iterations", "0"),
        ({"window_s": {"2": 0}}, "window_s.2", "0"),
        ({"window_s": {"3a": -5}}, "window_s.3a", "-5"),
        ({"limits": {"memory": "lots"}}, "limits.memory", '"lots"'),
        ({"sizes": {"L": {"n": "big"}}}, "sizes.L.n", '"big"'),
        ({"sizes": {"L": {"m": 3}}}, "sizes.L", '"m"'),
        ({"limits": {"cpus": 2}}, "limits.cpus", "2"),
    ],
)
def test_bad_values_name_key_and_value(patch, key, value):
    with pytest.raises(ConfigError) as e:
        validate({**GOOD, **patch})
    msg = str(e.value)
    assert key in msg and value in msg, msg
    assert "\n" not in msg


def test_yaml_syntax_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("microservices: [L, S\ncases: 1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(bad)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("microservices: [L, Q]\n", "'Q'"),
        ("microservices: [L]\niterations: 0\n", "iterations"),
        ("microservices: [L\n", "YAML"),
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
            "--configfile",
            str(cfg),
            "--cores",
            "1",
            "raw",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert needle in r.stdout + r.stderr
    assert not (tmp_path / "work" / "results").exists()
    print(f"rejected in {time.time() - t0:.1f} s")
