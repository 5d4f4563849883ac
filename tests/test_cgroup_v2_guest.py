"""The cgroup v2 paths of our code (host/cgroups.py, telemetry's per-entity counters, the
in-container read-back of containers/base/microservice-loop), for real, on a machine whose own
cgroups are v1: one `vm` guest booted with the unified hierarchy (guest_cgroup: v2) runs
tests/cgroup_v2_probe.py under Debian's python3-minimal, from an image built here on the
project's base image. The repository reaches the guest as a 9p bind, so the code under test is
the working tree's.

Wall time here (QEMU under TCG, 2 cores): 18 s with the images and the guest's disk already made
(the guest itself 14-17 s); 24 s on the first run, which builds the probe's image (apt-get install
python3-minimal) and its disk."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, requires_engine
from interference.host import cgroups, telemetry_rates
from interference.host.locks import measurement_lock
from interference.runtimes import RuntimeUnavailable
from interference.runtimes.base import ContainerSpec
from interference.runtimes.vm import VmRuntime
from interference.steps import images

# The schema's defaults (workflow/schemas/config.schema.yaml): the base every image is built on.
BASE = ("debian:bookworm-slim", "http://deb.debian.org/debian", "bookworm")
PROBE_DOCKERFILE = (
    "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
    "RUN apt-get update && apt-get install -y --no-install-recommends python3-minimal "
    "&& rm -rf /var/lib/apt/lists/*\n"
)
QUOTA_CORES = 0.5

pytestmark = [pytest.mark.integration, requires_engine]


def probe_image(work: Path, log: Path) -> Path:
    """The project's base image plus python3-minimal (built once per base), as a source json for
    the vm runtime's conversion (images.convert_image: a disk reused while nothing changed)."""
    base = images.build_image("base", "docker", work / "base.json", log, None, *BASE)
    digest = images.inputs_hash(base["id"], PROBE_DOCKERFILE)
    ref = f"interference/cgroup-v2-probe:{digest[:12]}"
    inspect = ["docker", "image", "inspect", "-f", "{{.Id}}", ref]
    if subprocess.run(inspect, capture_output=True).returncode != 0:
        with open(log, "a") as f:
            subprocess.run(
                ["docker", "build", "-t", ref, "--build-arg", f"BASE_IMAGE={base['ref']}", "-"],
                input=PROBE_DOCKERFILE.encode(), stdout=f, stderr=subprocess.STDOUT, check=True,
            )  # fmt: skip
    image_id = subprocess.run(inspect, capture_output=True, text=True, check=True).stdout.strip()
    source = {"ref": ref, "id": image_id, "inputs_hash": digest, "microservices": [], "runtime": "docker"}
    (work / "probe.json").write_text(json.dumps(source))
    return work / "probe.json"


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    """The probe's JSON, its telemetry.tsv and the runtime's record of the guest."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the vm runtime's cgroups and images)")
    work = tmp_path_factory.mktemp("cgroup-v2")
    # A TCG guest boots in about 15 s; on a loaded machine it may take several times that.
    rt = VmRuntime(guest_cgroup="v2", state_dir=str(work / "state"), boot_timeout_s=300)
    try:
        rt.check()
    except RuntimeUnavailable as e:
        pytest.skip(str(e))
    results = work / "results"
    results.mkdir()
    log = work / "build.log"
    spec = ContainerSpec(
        name=f"cgv2probe-{os.getpid()}",
        image="",
        command=["python3", "/repo/tests/cgroup_v2_probe.py", "/repo", "/results/seen.json"],
        memory="512m",  # the guest's RAM; no host limits: vCPUs = this machine's cores
        binds=[(str(REPO), "/repo"), (str(results), "/results")],
    )
    # Builds and a TCG guest load the machine: never beside a measurement.
    with measurement_lock():
        spec.image = images.convert_image(rt, "cgroup-v2-probe", probe_image(work, log), log)["id"]
        started = time.time()
        try:
            rt.start(spec)
            code = rt.wait(spec.name, 900)
            console = rt.logs(spec.name)
        finally:
            rt.remove(spec.name)
    seconds = time.time() - started
    print(f"guest booted, probed and removed in {seconds:.0f} s")
    left = cgroups.folders_of(spec.name) + list((work / "state" / "guests").glob("*"))
    out = results / "seen.json"
    assert code == 0 and out.exists(), console[-4000:]
    return {
        "seen": json.loads(out.read_text()),
        "tel": telemetry_rates.read(results / "telemetry.tsv"),
        "described": rt.describe(),
        "argv": rt.run_argv(spec),
        "left": left,
    }


def test_the_guest_runs_the_unified_hierarchy_and_says_so(guest):
    seen = guest["seen"]
    assert seen["cgroup_version"] == 2
    assert "cgroup_no_v1=all" in seen["cmdline"] and "cgroup_no_v1=all" in " ".join(guest["argv"])
    assert [m.split()[:3] for m in seen["mounts"]] == [["cgroup2", "/sys/fs/cgroup", "cgroup2"]]
    assert guest["described"]["details"]["guest cgroups"].startswith("v2")
    # The probe itself sits in the root group: the machine's counters, not an entity's.
    assert seen["root_process_folders"] == {}


def test_create_writes_the_limits_in_one_unified_folder(guest):
    seen = guest["seen"]
    assert seen["folders"] == ["/sys/fs/cgroup/interference/v2probe"]
    assert seen["written"] == {
        "cpuset.cpus": "0",
        "cpu.max": "50000 100000",
        "memory.max": str(64 * 1024**2),
        "memory.swap.max": "0",
    }
    assert seen["names_after_create"] == ["v2probe"]
    for folder, control in seen["subtree_control"].items():
        assert {"cpuset", "cpu", "memory"} <= set(control.split()), folder


def test_microservice_loop_reads_the_limits_back_from_its_own_group(guest):
    limits = guest["seen"]["limits"]
    assert limits["cgroup_version"] == "2"
    assert limits["cpuset"] == "0" and limits["cpu_max"] == "50000 100000"
    assert limits["memory_max"] == str(64 * 1024**2)
    if guest["seen"]["nproc"] > 1:  # the group's, not the machine's, cores
        assert guest["seen"]["root_cpuset"] != "0"


def test_telemetry_counts_cpu_time_throttling_and_memory_events(guest):
    seen = guest["seen"]
    assert seen["busy_process_folders"] == {"v2": "/sys/fs/cgroup/interference/v2probe"}
    first, second, after = seen["counters_first"], seen["counters_second"], seen["counters_after_hog"]
    assert second["cpu_usage_ns"] > first["cpu_usage_ns"]
    assert second["nr_throttled"] > first["nr_throttled"] and second["throttled_ns"] > first["throttled_ns"]
    cores = (second["cpu_usage_ns"] - first["cpu_usage_ns"]) / 1e9 / (seen["second_at"] - seen["first_at"])
    assert 0 < cores <= QUOTA_CORES * 1.2  # the quota holds
    # The child writing twice the limit is killed by the group's OOM killer, and counted.
    assert seen["hog_returncode"] == -9
    assert after["oom_kill"] > second["oom_kill"] and after["memory_failcnt"] > second["memory_failcnt"]
    # The group's own pressure files (Debian's kernel has PSI on).
    assert {"psi_cpu_some_us", "psi_memory_full_us", "psi_io_some_us"} <= set(second)
    assert second["psi_cpu_some_us"] > first["psi_cpu_some_us"]


def test_the_sampler_follows_the_entity_until_its_group_is_removed(guest):
    seen, tel = guest["seen"], guest["tel"]
    busy = tel[tel["source"] == "busy"]
    assert busy["time"].max() < seen["removed_at"] < tel["time"].max()  # host rows went on
    assert seen["sampler_still_watching"] == []
    got = telemetry_rates.per_interval(tel, "busy", seen["first_at"], seen["second_at"])
    assert 0 < got["cpu_cores"] <= QUOTA_CORES * 1.2 and got["nr_throttled"] > 0
    assert got["psi_cpu_some"] > 0  # the group's own pressure, as a share of the interval


def test_kill_and_remove_leaves_nothing(guest):
    seen = guest["seen"]
    assert seen["removed"] == ["/sys/fs/cgroup/interference/v2probe"]
    assert seen["busy_returncode"] == -9  # killed by kill_and_remove, still running till then
    assert seen["folders_left"] == [] and seen["names_at_end"] == []
    assert "error" not in seen
    assert guest["left"] == []  # on this machine: the qemu process's cgroups, the control folder
