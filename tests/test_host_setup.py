"""Host packages: every runtime and study declares its own, a config needs only its runtimes'
and studies', and scripts/ensure-engine.sh asks apt for exactly those (a fake apt-get on a PATH
without the real tools records what it was asked)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from interference import runtimes, studies
from interference.host.packages import HostPackage
from interference.steps import host_setup
from interference.steps.config import read_yaml, validate


def packages(config_path) -> set[str]:
    # Without the machine's checks: what is asked is what a config needs before it is installed.
    config = validate(read_yaml(REPO / config_path), str(config_path), machine=False)
    return {n.package.debian for n in host_setup.needs(config)}


def test_every_runtime_and_study_declares_its_packages():
    for name, adapter in runtimes.ADAPTERS.items():
        assert isinstance(adapter.host_packages, tuple), name
        assert all(isinstance(p, HostPackage) for p in adapter.host_packages), name
        # Each runtime needs something installed: its own tool, or the one it converts images with.
        assert host_setup.runtime_needs(name), name
    for name, study in studies.registry().items():
        assert isinstance(study.host_packages({"runtimes": ["docker"]} | _defaults(study)), tuple), name


def _defaults(study) -> dict:
    props = study.config_schema().get("properties", {})
    return {k: v["default"] for k, v in props.items() if "default" in v}


def test_a_config_of_findings_needs_what_its_plan_runs():
    """A config of findings installs what the planned runs need: paper 000's (the pair study on
    Docker) Docker and debootstrap only; paper 003's also ApacheBench and tinc, not LXC."""

    def of(findings):
        cfg = validate({"findings": findings, "studies": {}}, "test", machine=False)
        return {n.package.debian for n in host_setup.needs(cfg)}

    assert of(["000-*"]) == {"docker.io", "debootstrap"}
    ping = of(["003-*"])
    assert {"docker.io", "apache2-utils", "tinc"} <= ping and "lxc" not in ping


def test_a_config_needs_what_its_runtimes_and_studies_declare():
    # paper001: bare metal, Docker, LXC, nested, VM; the network study with OVS.
    need = packages("config/paper001.yaml")
    assert {"docker.io", "debootstrap", "lxc", "qemu-system-x86", "linux-image-amd64"} <= need
    assert {"iperf3", "sockperf", "openvswitch-switch", "ethtool"} <= need
    assert not need & {"podman", "slurm-wlm", "munge", "tinc", "apache2-utils"}
    # paper003: ping-pong over tinc needs ApacheBench and tinc, no VM kernel.
    need = packages("config/paper003-ci.yaml")
    assert {"apache2-utils", "tinc", "docker.io"} <= need and "qemu-system-x86" not in need


def test_tests_need_every_runtime_and_slurm():
    need = {n.package.debian for n in host_setup.test_needs()}
    declared = {p.debian for a in runtimes.ADAPTERS.values() for p in a.host_packages}
    assert declared <= need
    assert {"slurm-wlm", "munge", "openvswitch-switch", "tinc", "debootstrap"} <= need


def test_package_names_per_distribution():
    vm = {n.package.debian: n.package for n in host_setup.runtime_needs("vm")}
    assert vm["linux-image-amd64"].name_on("ubuntu") == "linux-image-generic"
    assert vm["linux-image-amd64"].name_on("debian") == "linux-image-amd64"
    assert vm["cpio"].name_on("ubuntu") == "cpio"


def test_explain_names_who_needs_what_and_the_command():
    lacking = host_setup.missing(
        [host_setup.Need("runtime 'podman'", HostPackage("podman", "no-such-command-here", "the Podman CLI"))]
    )
    text = host_setup.explain(lacking, "The config x.yaml", distro="debian")
    assert "podman (the Podman CLI) for runtime 'podman'" in text
    assert "apt-get install podman" in text


# -- ensure-engine.sh with a fake apt-get ---------------------------------------------------------

FAKE_APT = """#!/bin/sh
echo "$*" >> {log}
case "$*" in *docker.io*) touch {marker} ;; esac
"""
# The engine answers once apt has "installed" docker.io.
FAKE_DOCKER = """#!/bin/sh
[ "$1" = info ] && [ -e {marker} ]
"""


@pytest.fixture
def fake_bin(tmp_path):
    """A PATH with a fake apt-get and docker and the few real tools the script uses, none of
    the packages' commands: every declared command counts as missing."""
    b = tmp_path / "bin"
    b.mkdir()
    log, marker = tmp_path / "apt.log", tmp_path / "installed"
    for name, text in (("apt-get", FAKE_APT), ("docker", FAKE_DOCKER)):
        (b / name).write_text(text.format(log=log, marker=marker))
        (b / name).chmod(0o755)
    for tool in ("sh", "id", "dirname", "seq", "sleep", "tail", "cat", "touch"):
        (b / tool).symlink_to(shutil.which(tool))
    return b, log


def ensure(fake, *args):
    b, _ = fake
    env = {"PATH": str(b), "PYTHON": sys.executable, "HOME": "/tmp"}
    return subprocess.run(
        [str(b / "sh"), str(REPO / "scripts" / "ensure-engine.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def asked(log: Path) -> list[str]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.skipif(os.geteuid() != 0, reason="ensure-engine installs only as root")
def test_ensure_engine_installs_only_what_the_plan_of_pair_findings_needs(fake_bin, tmp_path):
    config = tmp_path / "pairs.yaml"
    config.write_text('findings: ["000-*", "002-*"]\n')
    r = ensure(fake_bin, str(config))
    assert r.returncode == 0, r.stderr
    installs = [a for a in asked(fake_bin[1]) if a[0] == "install"]
    assert len(installs) == 1
    assert [p for p in installs[0] if not p.startswith("-")][1:] == ["docker.io", "debootstrap"]


@pytest.mark.skipif(os.geteuid() != 0, reason="ensure-engine installs only as root")
def test_make_papers_first_engine_step_reads_the_configs_own_studies_only(fake_bin, tmp_path):
    """--base (make paper's first step, before its calibration runs): the config's own studies, not
    its findings' (paper 003's tinc here); without a budget no plan is priced or kept."""
    config = tmp_path / "own.yaml"
    config.write_text('findings: ["003-*"]\nstudies: {pairs: {microservices: [P]}}\n')
    r = ensure(fake_bin, str(config), "--base")
    assert r.returncode == 0, r.stderr
    first = {p for a in asked(fake_bin[1]) if a[0] == "install" for p in a}
    assert "docker.io" in first and "tinc" not in first
    r = ensure(fake_bin, str(config))  # the findings' needs: make paper's step after the calibration
    assert r.returncode == 0, r.stderr
    assert "tinc" in {p for a in asked(fake_bin[1]) if a[0] == "install" for p in a}


@pytest.mark.skipif(os.geteuid() != 0, reason="ensure-engine installs only as root")
def test_ensure_engine_for_the_tests_installs_every_runtime(fake_bin):
    r = ensure(fake_bin, "--tests", "--browser")
    assert r.returncode == 0, r.stderr
    (install,) = [a for a in asked(fake_bin[1]) if a[0] == "install"]
    got = {p for p in install if not p.startswith("-")} - {"install"}
    assert {"docker.io", "podman", "lxc", "qemu-system-x86", "slurm-wlm", "munge", "tinc", "chromium"} <= got


def test_ensure_engine_as_a_user_names_packages_and_command_and_installs_nothing(fake_bin):
    b, log = fake_bin
    # Another user: `id -u` says so (the rest is real; the project's Python stays readable).
    (b / "id").unlink()
    (b / "id").write_text('#!/bin/sh\n[ "$1" = -u ] && echo 1000\n')
    (b / "id").chmod(0o755)
    r = ensure(fake_bin, "config/paper003-ci.yaml")
    assert r.returncode == 1
    assert asked(log) == []  # apt was never called
    paragraph = " ".join(r.stderr.split())
    assert "tinc (the userspace overlay) for study 'pingpong'" in paragraph
    # Bare metal runs Docker's images: Docker is named with the runtime that asked first.
    assert "docker.io (the Docker engine) for runtime 'baremetal' (images from 'docker')" in paragraph
    command = paragraph.split("`")[1]
    assert "apt-get install" in command
    assert {"docker.io", "debootstrap", "tinc", "apache2-utils"} <= set(command.split())


def test_snakemake_names_a_missing_package_before_building_anything(tmp_path):
    """A config on Podman where podman is not on PATH (every other command is): one paragraph
    naming the runtime, the package and the command, exit != 0, no image built."""
    b = tmp_path / "bin"
    b.mkdir()
    for folder in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        for tool in Path(folder).glob("*") if Path(folder).is_dir() else []:
            if tool.name != "podman" and not (b / tool.name).exists():
                (b / tool.name).symlink_to(tool)
    config = tmp_path / "podman.yaml"
    config.write_text(
        "runtimes: [podman]\nstudies:\n  pairs:\n    microservices: [L]\n    cases: ['1']\n    iterations: 1\n"
    )
    r = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "--cores", "1", "-d", str(tmp_path / "wd")]
        + ["report/paper.html", "--configfile", str(config)],
        cwd=REPO,
        env={**os.environ, "PATH": str(b)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode != 0
    assert "Nothing was built or run" in out
    assert "podman (the Podman CLI) for runtime 'podman'" in out
    assert "apt-get install podman" in out
    assert not (tmp_path / "wd" / "results" / "images").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="ensure-engine installs only as root")
def test_ensure_engine_keeps_a_runners_docker_ce(fake_bin, tmp_path):
    """A GitHub runner has docker-ce (dockerd on PATH, the engine answering), whose containerd.io
    conflicts with Debian's docker.io: nothing Docker is asked of apt, and no dockerd started."""
    b, log = fake_bin
    (tmp_path / "installed").touch()  # the engine answers from the start
    (b / "dockerd").write_text(f"#!/bin/sh\ntouch {tmp_path / 'dockerd-started'}\n")
    (b / "dockerd").chmod(0o755)
    r = ensure(fake_bin, "config/ci.yaml")
    assert r.returncode == 0, r.stderr
    asked_for = {p for a in asked(log) if a[0] == "install" for p in a if not p.startswith("-")}
    assert not asked_for & {"docker.io", "containerd", "runc"}
    assert not (tmp_path / "dockerd-started").exists()
