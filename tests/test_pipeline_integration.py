"""Real runs on a tiny config: images built, Case 3b run on every runtime in real containers
with real cgroup limits, artifacts checked, one case forced to rerun alone, failures recorded,
and nothing left behind. (Case 1 is the same runtime calls for one container: its runs are in
test_microservices_integration.py and, unlimited, test_case_1u here.)"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import (
    REPO,
    SNAKEMAKE,
    leftover_containers,
    nothing_left,
    requires_engine,
    run_settings,
    runtime_leftovers,
    start_run_case,
)

pytestmark = [pytest.mark.integration, requires_engine]

# Every runtime that runs here: Docker, Podman, bare metal (the same binaries, chroot + cgroups),
# LXC, nested Docker-in-Docker and a VM per container (QEMU; TCG here, as /dev/kvm is PVM).
RUNTIMES = ["docker", "podman", "baremetal", "lxc", "nested", "vm"]
PAIRS = {
    "microservices": ["L", "S"],
    "cases": ["3b"],  # two limited containers, each on its core: every runtime call Case 1 makes
    "pairs": ["L+S"],  # the pair that gives both X(+Y) and Y(+X); self-pairs cost runs, not coverage
    "iterations": 2,
    "window_s": {"3b": 4},
    "iteration_timeout_s": 60,
    "limits": {"cpu_mode": "cpuset", "cpus": 1, "memory": "1g"},
    "sizes": {"L": {"n": 800}, "S": {"array_elements": 2000000, "ntimes": 3}},
}
TINY = {"host": "testhost", "runtimes": RUNTIMES, "studies": {"pairs": PAIRS}}
RAW = "results/raw/testhost/docker/pairs"


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [
            SNAKEMAKE,
            "-s",
            str(REPO / "Snakefile"),
            "-d",
            str(workdir),
            *args,
            "--configfile",
            str(workdir / "tiny.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = tmp_path_factory.mktemp("pipeline")
    (wd / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    # --cores 2: the measurement resource and lock must still serialise the runs.
    snakemake(wd, "--cores", "2", "raw")
    return wd


def metas(wd: Path, runtime: str = "docker") -> dict[str, dict]:
    raw = wd / RAW.replace("/docker/", f"/{runtime}/")
    return {
        str(p.relative_to(raw).parent): json.loads(p.read_text())
        for p in sorted(raw.glob("case*/*/rep*/meta.json"))
    }


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_run_has_its_artifacts(workdir, runtime):
    runs = metas(workdir, runtime)
    raw = workdir / RAW.replace("/docker/", f"/{runtime}/")
    assert sorted(runs) == ["case3b/L+S/rep1"]
    for key, meta in runs.items():
        assert meta["n_failed"] == 0, key
        assert meta["runtime_info"]["version"] and meta["runtime_info"]["cgroup_version"]
        assert meta["host_info"]["cpu_model"] and meta["host_info"]["kernel"]
        assert len(meta["host_info"]["loadavg_before"]) == 3
        for member in meta["members"]:
            for it in member["iterations"]:
                assert (raw / key / it["stdout"]).stat().st_size > 0
                assert it["end"] > it["start"]
        assert meta["study"] == "pairs" and meta["settings"]["runtime"] == runtime
        assert meta["runtime_info"]["runtime"] == runtime
    # Each member's loop repeats its iterations over the window (a VM's may fit only one).
    assert all(len(m["iterations"]) >= 1 for m in runs["case3b/L+S/rep1"]["members"])


def _cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_linpack_runs_the_kernel_of_this_cpu(workdir, runtime):
    """OpenBLAS 0.3.21 falls back to its SSE3 kernel on CPUs newer than it knows (3x slower here);
    the microservice picks the kernel from the CPU's flags (containers/linpack/run), except in
    an emulator, where OpenBLAS's own SSE choice runs twelve times faster than emulated AVX2."""
    raw = workdir / RAW.replace("/docker/", f"/{runtime}/") / "case3b/L+S/rep1"
    meta = metas(workdir, runtime)["case3b/L+S/rep1"]
    (member,) = [m for m in meta["members"] if m["microservice"] == "L"]
    out = (raw / member["iterations"][0]["stdout"]).read_text()
    core = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)["core"]
    flags = _cpu_flags()
    if meta["runtime_info"]["engine"] == "QEMU (TCG)":
        assert core not in ("Haswell", "SkylakeX", "Zen"), out  # no emulated AVX2 or AVX-512
    elif {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags:
        assert core == "SkylakeX", out
    elif {"avx2", "fma"} <= flags:
        assert core == "Haswell", out


@pytest.mark.parametrize("runtime", [r for r in RUNTIMES if r != "vm"])
def test_limits_are_read_back_inside_the_containers(workdir, runtime):
    members = metas(workdir, runtime)["case3b/L+S/rep1"]["members"]
    assert sorted(m["limits_read_back"]["cpuset"] for m in members) == ["0", "1"]
    for m in members:
        assert m["limits_read_back"]["nproc"] == "1" and int(m["limits_read_back"]["memory_max"]) == 1024**3


def test_a_vms_limits_are_its_vcpus_and_memory(workdir):
    runs = metas(workdir, "vm")
    for key in ("case3b/L+S/rep1",):
        for member in runs[key]["members"]:
            seen = member["limits_read_back"]
            assert seen["nproc"] == "1", key  # cpuset "0" or "1": one vCPU
            # 1 GiB of guest RAM, less what the guest kernel keeps for itself.
            assert 0.85 * 1024**2 < int(seen["mem_total_kb"]) <= 1024**2, key
    # The qemu processes ran pinned to the member's core, in a host cgroup of the runner's.
    argvs = [c["argv"] for c in runs["case3b/L+S/rep1"]["containers"]]
    assert all("-smp" in a and a[a.index("-smp") + 1] == "1" and "-m" in a for a in argvs)
    assert [c["limits_requested"]["cpuset"] for c in runs["case3b/L+S/rep1"]["containers"]] == ["0", "1"]


def test_nested_parents_are_recorded(workdir):
    for key, meta in metas(workdir, "nested").items():
        parent = meta["runtime_run"]
        assert "--cgroupns" in parent["parent_argv"] and "SYS_RESOURCE" in parent["parent_argv"], key
        assert parent["inner_engine"]["Driver"] == "overlay2"
        assert set(parent["child_image_load_s"]) == set(key.split("/")[1].split("+"))


def test_overlap_marking(workdir):
    meta = metas(workdir)["case3b/L+S/rep1"]
    lo, hi = meta["overlap"]["start"], meta["overlap"]["end"]
    assert hi - lo > 2
    for member in meta["members"]:
        its = member["iterations"]
        assert len(its) >= 2 and any(i["in_overlap"] for i in its)
        for i in its:
            assert i["in_overlap"] == (lo <= i["start"] and i["end"] <= hi)
    # Both members began within a fraction of a second of each other.
    firsts = [m["iterations"][0]["start"] for m in meta["members"]]
    assert abs(firsts[0] - firsts[1]) < 0.5


def test_measurements_never_overlapped(workdir):
    spans = sorted((m["started"], m["finished"]) for rt in RUNTIMES for m in metas(workdir, rt).values())
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end


def test_no_container_is_left(workdir):
    assert nothing_left() == []


def test_the_profile_is_in_force(workdir):
    # profiles/default: one measurement at a time, and the shell commands printed.
    log = sorted((workdir / ".snakemake/log").glob("*.snakemake.log"))[0].read_text()
    assert 'Provided resources: measurement=Resource("measurement", 1)' in log
    assert "Shell command: python -m interference.steps.runner" in log


def test_samples_table(workdir):
    snakemake(workdir, "--cores", "1", "results/parsed/pairs/samples.tsv")
    df = pd.read_csv(
        workdir / "results/parsed/pairs/samples.tsv", sep="\t", dtype={"case": str}, keep_default_na=False
    )
    assert set(df["runtime"]) == set(RUNTIMES)
    assert set(df["status"]) == {"ok"}
    assert set(df["metric"]) == {"gflops", "copy", "scale", "add", "triad"}
    both = df[(df["case"] == "3b") & (df["target"] == "L") & (df["partner"] == "S")]
    assert not both.empty  # one pair run gives L(+S) ...
    assert not df[
        (df["case"] == "3b") & (df["target"] == "S") & (df["partner"] == "L")
    ].empty  # ... and S(+L)


def test_every_iteration_has_its_contention_telemetry(workdir):
    # Ran with the default telemetry_interval_s (0.5 s); samples.tsv is made by test_samples_table.
    df = pd.read_csv(workdir / "results/parsed/pairs/samples.tsv", sep="\t", dtype={"case": str})
    for runtime in RUNTIMES:
        for key, meta in metas(workdir, runtime).items():
            assert meta["telemetry"]["samples"] >= 2, (runtime, key)
            tel = pd.read_csv(
                workdir / RAW.replace("/docker/", f"/{runtime}/") / key / "telemetry.tsv", sep="\t"
            )
            assert "host" in set(tel["source"]), (runtime, key)
    # The host's pressure and context switches over the iterations, on every runtime (a VM's
    # iteration is timed by the guest's clock, which may put its edge just outside the samples).
    host = df[df["psi_cpu_some"].notna()]
    assert len(host) > 0.98 * len(df) and set(host["runtime"]) == set(RUNTIMES)
    assert host["psi_cpu_some"].between(0, 1).all() and (host["ctxt_per_s"] > 0).all()
    # Each member's own cgroup where its process is on this machine (not the inner engine's children).
    # Case 3b's containers are sampled from before the window opens; an iteration that ends after
    # its container's last sample (the last ones: the cgroup goes with the container) and Case 1's
    # short iterations, begun before their container's first sample, get no values rather than a part.
    # So up to one sampling interval at each edge of the window may go unseen: with a 4-s window
    # and 0.5-s samples, a quarter of the overlap at worst (lxc saw 84 % on one CI run).
    own = df[(df["runtime"] != "nested") & (df["case"] == "3b") & df["in_overlap"]]
    interval_s, window_s = 0.5, PAIRS["window_s"]["3b"]
    for runtime, d in own.groupby("runtime"):
        assert d["memory_failcnt"].notna().mean() > 1 - 2 * interval_s / window_s, runtime
    seen = own[own["memory_failcnt"].notna()]
    assert (seen["oom_kill"] == 0).all() and (seen["memory_failcnt"] == 0).all()
    assert (seen["nr_throttled"] == 0).all()  # cpuset limits: no CFS quota to be throttled by
    docker = seen[seen["runtime"] == "docker"]
    # Each member's own cgroup: busy, and never more than the one core of its cpuset (the whole
    # host's reading would pass 1 with both members running). How busy depends on the machine's
    # other load (the other test processes), so no lower bound is asserted beyond 0.
    assert docker["cpu_cores"].between(0, 1.1).all() and (docker["cpu_cores"] > 0).mean() > 0.9
    assert df[df["runtime"] == "nested"]["memory_failcnt"].isna().all()
    # The steal on each member's own CPUs (a share of them), on every iteration of a runtime
    # whose containers run here.
    docker_all = df[df["runtime"] == "docker"]
    assert docker_all["own_steal"].notna().mean() > 0.9 and docker_all["own_steal"].between(0, 1).all()


def test_forcing_one_case_reruns_exactly_that_run(workdir):
    """Also stopped midway first, as Ctrl-C stops it: the old run is back, nothing is left, and
    the next command's plan counts the run it makes again."""
    target = f"{RAW}/case3b/L+S/rep1/meta.json"
    made_before = (workdir / target).read_text()
    log = workdir / "results/logs/run/testhost/docker/pairs/case3b/L+S/rep1.log"
    old_run = run_id_in(log)
    command = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir)]
    config = ["--configfile", str(workdir / "tiny.yaml")]  # last: it takes every word after it
    # Its own process group, SIGINT not ignored (a background process's is): what a terminal's
    # Ctrl-C signals.
    proc = subprocess.Popen([*command, target, "--cores", "1", "--forcerun", target, *config], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline, run = time.time() + 300, None  # the other test processes' runs may hold the lock first
    while time.time() < deadline and proc.poll() is None:
        run = run_id_in(log)
        if run not in (None, old_run) and len(leftover_containers(run)) == 2:
            break
        time.sleep(0.2)
    assert proc.poll() is None and len(leftover_containers(run)) == 2, "the forced run's containers never ran"
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) != 0
    assert (workdir / target).read_text() == made_before and nothing_left() == []
    dry = subprocess.run([*command, "-n", target, *config], capture_output=True, text=True, timeout=300)
    assert "Plan: 1 runs to do (pairs on docker: 1)." in dry.stderr, dry.stderr[-2000:]
    before = {p: p.stat().st_mtime for p in (workdir / "results/raw").rglob("meta.json")}
    # The README's command: name the run's meta.json as the target and force it.
    r = snakemake(workdir, target, "--cores", "1", "--forcerun", target)
    stats = [line.split() for line in (r.stdout + r.stderr).splitlines()]
    assert ["run", "1"] in stats and ["total", "1"] in stats, r.stderr
    after = {p: p.stat().st_mtime for p in before}
    changed = [str(p.relative_to(workdir)) for p in before if after[p] != before[p]]
    assert changed == [target]


def run_id_in(log: Path) -> str | None:
    """The run id a run's log names ("run ID: ..."), once its runner has the lock."""
    lines = log.read_text().splitlines() if log.exists() else []
    return next((line.split()[1].rstrip(":") for line in lines if line.startswith("run ")), None)


def settings(case, pair, **extra):
    return run_settings(case, pair, **{"limits": PAIRS["limits"], "sizes": PAIRS["sizes"], **extra})


def test_crashing_and_hanging_benchmarks_are_recorded(workdir, tmp_path):
    images = workdir / "results/images/testhost/docker"
    # STREAM with 200 M elements (4.8 GB) in a 1 GB container: killed by the OOM killer.
    crash = settings("1", "S", iterations=2, sizes={"S": {"array_elements": 200_000_000, "ntimes": 3}})
    assert start_run_case(crash, [images / "S.json"], tmp_path / "crash/meta.json").wait() == 0
    meta = json.loads((tmp_path / "crash/meta.json").read_text())
    assert meta["n_failed"] == 2
    assert all(i["status"] != "ok" for i in meta["members"][0]["iterations"])
    # Linpack N = 6000 cannot finish in 1 s: the iteration is killed and recorded as a timeout.
    hang = settings("1", "L", iterations=1, iteration_timeout_s=1, sizes={"L": {"n": 6000}})
    assert start_run_case(hang, [images / "L.json"], tmp_path / "hang/meta.json").wait() == 0
    meta = json.loads((tmp_path / "hang/meta.json").read_text())
    assert [i["status"] for i in meta["members"][0]["iterations"]] == ["timeout"]
    assert nothing_left() == []
    # The parser turns them into rows with a status and no value.
    from interference.steps.parse import parse_run

    rows = parse_run(tmp_path / "crash/meta.json")
    assert rows["value"].isna().all() and (rows["status"] != "ok").all()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_sigterm_removes_everything_the_run_made(workdir, tmp_path, runtime):
    images = workdir / "results/images/testhost" / runtime
    meta = tmp_path / "term/meta.json"
    # Held (pairs.hold): its members wait for the release file, which never comes, so they are
    # running when the signal arrives however slowly this runtime starts them.
    s = settings("3b", "L+S", window_s=120, runtime=runtime, hold=True)
    proc = start_run_case(s, [images / "L.json", images / "S.json"], meta, stdout=subprocess.PIPE)
    # Its first line once it holds the measurement lock: "run RUN_ID: ..." (the other test process
    # may hold the lock first); what carries its id is what it made.
    first = proc.stdout.readline()
    assert first.startswith("run "), first
    run_id = first.split()[1].rstrip(":")

    def made() -> list[str]:
        return leftover_containers(run_id) + runtime_leftovers(run_id)

    deadline = time.time() + 60
    while len([r for r in made() if "mount" not in r]) < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert len(made()) >= 2, made()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) != 0
    proc.stdout.close()
    assert nothing_left() == []
    assert not meta.exists()  # an interrupted run leaves no meta.json: it simply reruns


def test_an_interrupted_rerun_puts_back_the_run_made_before(workdir, tmp_path):
    """A forced rerun (snakemake keeps the old meta.json: update() in run.smk) stopped mid-run
    leaves the measurement made before as it was, raw files and all, and nothing of its own."""
    images = workdir / "results/images/testhost/docker"
    meta = tmp_path / "again/meta.json"
    meta.parent.mkdir()
    meta.write_text('{"made": "before"}')
    (meta.parent / "member1-L").mkdir()
    (meta.parent / "member1-L" / "iter0001.out").write_text("the old output")
    s = settings("3b", "L+S", window_s=120, hold=True)
    proc = start_run_case(s, [images / "L.json", images / "S.json"], meta, stdout=subprocess.PIPE)
    first = proc.stdout.readline()
    assert first.startswith("run "), first
    run_id = first.split()[1].rstrip(":")
    deadline = time.time() + 60
    while len(leftover_containers(run_id)) < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert not meta.exists() and not (meta.parent / "member1-L" / "iter0001.out").exists()  # set aside
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) != 0
    proc.stdout.close()
    assert meta.read_text() == '{"made": "before"}'
    assert sorted(p.name for p in meta.parent.iterdir()) == ["member1-L", "meta.json"]
    assert (meta.parent / "member1-L" / "iter0001.out").read_text() == "the old output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]  # no copy set aside is left
    assert nothing_left() == []


def test_case_1u_runs_alone_without_limits_and_records_its_cpu(workdir, tmp_path):
    """Case 1u: fresh containers one after another like Case 1, with no cgroup limit read back,
    L's threads following the now unrestricted CPUs, and each iteration's CPU use as the loop read
    it from the container's cgroup (Case 1's telemetry, which the sampler misses)."""
    images = workdir / "results/images/testhost/docker"
    meta_path = tmp_path / "1u/meta.json"
    s = settings("1u", "L", iterations=2)
    assert start_run_case(s, [images / "L.json"], meta_path).wait(timeout=300) == 0
    meta = json.loads(meta_path.read_text())
    (member,) = meta["members"]
    back = member["limits_read_back"]
    assert int(back["nproc"]) == os.cpu_count()
    assert back["memory_max"] == "max" or int(back["memory_max"]) > 1024**4  # no limit (v2: "max")
    its = member["iterations"]
    assert [i["status"] for i in its] == ["ok", "ok"] and all(i["in_overlap"] for i in its)
    # Recorded for every iteration, and never more than the CPUs the container may use.
    for it in its:
        assert 0.1 < it["own_cpu_cores"] <= os.cpu_count() + 0.05, it
    # The limited runs of the same study: one core each, and their CPU use says so.
    for m in metas(workdir)["case3b/L+S/rep1"]["members"]:
        for it in m["iterations"]:
            assert 0 < it["own_cpu_cores"] <= 1.05, it
