"""Contention telemetry: a real throttled cgroup seen by the sampler, and the join to iterations."""

import os
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
from interference.host import cgroups, telemetry, telemetry_rates


def proc_stat() -> dict[str, int]:
    """Context switches and the CPUs' steal (the 8th value of the "cpu" line), read here."""
    lines = {f[0]: f[1:] for f in map(str.split, Path("/proc/stat").read_text().splitlines()) if f}
    return {"ctxt": int(lines["ctxt"][0]), "steal_ticks": int(lines["cpu"][7])}


def test_host_counters_have_pressure_and_context_switches(monkeypatch):
    before = proc_stat()
    c = telemetry.host_counters()
    after = proc_stat()
    for k in ("ctxt", "steal_ticks"):  # counters: read between our two reads of /proc/stat
        assert before[k] <= c[k] <= after[k], k
    # Steal in clock ticks: 250 ticks over 5 s on a 100 Hz clock are half a CPU the hypervisor
    # gave to others.
    monkeypatch.setattr(telemetry_rates, "CLOCK_TICKS", 100)
    assert telemetry_rates._rate("steal_ticks", 250, 5.0) == ("steal_cores", 0.5)
    # Stall time as a share of the interval: 2.5 s of 5 s is half; a counter read ahead of its
    # timestamp (5.2 s in 5 s, on a saturated machine) is the whole interval, not more.
    assert telemetry_rates._rate("psi_cpu_some_us", 2_500_000, 5.0) == ("psi_cpu_some", 0.5)
    assert telemetry_rates._rate("psi_cpu_some_us", 5_200_000, 5.0) == ("psi_cpu_some", 1.0)
    if os.path.exists("/proc/pressure/cpu"):
        assert {"psi_cpu_some_us", "psi_memory_full_us", "psi_io_some_us"} <= set(c)
    # Each CPU's steal too (the 8th value of its cpu<N> line): as many as this machine has.
    per_cpu = {k for k in c if k.startswith("steal_ticks_cpu")}
    assert per_cpu == {f"steal_ticks_cpu{i}" for i in range(os.cpu_count())}
    assert sum(c[k] for k in per_cpu) <= c["steal_ticks"] + len(per_cpu)  # the cpu line is their sum


def test_a_members_own_steal_is_the_steal_on_its_own_cpus(monkeypatch):
    """The hypervisor takes 30 % of CPU 0 for 10 s and nothing of CPU 1. A member pinned to CPU
    0 lost 0.3 of its CPU, one pinned to CPU 1 nothing, an unpinned one 0.15 of its two; the
    machine-wide figure is 0.3 of a CPU for all three (by hand, with a 100 Hz clock)."""
    monkeypatch.setattr(telemetry_rates, "CLOCK_TICKS", 100)
    tel = pd.DataFrame(
        [(t, "host", counter, value) for t in (0.0, 10.0) for counter, value in
         (("steal_ticks", 300 * t / 10), ("steal_ticks_cpu0", 300 * t / 10), ("steal_ticks_cpu1", 0))],
        columns=telemetry.COLUMNS,
    )  # fmt: skip
    meta = {
        "telemetry": {"file": "telemetry.tsv"},
        "containers": [
            {"name": "m1", "role": "member1", "limits_requested": {"cpuset": "0"}},
            {"name": "m2", "role": "member2", "limits_requested": {"cpuset": "1"}},
            {"name": "m3", "role": "member3", "limits_requested": {"cpuset": None}},
        ],
    }
    df = pd.DataFrame({"member": [1, 2, 3], "start": [2.0, 2.0, 2.0], "end": [8.0, 8.0, 8.0]})
    monkeypatch.setattr(telemetry_rates, "read", lambda path: tel)
    out = telemetry_rates.attach(df, meta, Path("."))
    assert out["own_steal"].tolist() == pytest.approx([0.3, 0.0, 0.15])
    assert out["steal_cores"].tolist() == pytest.approx([0.3] * 3)
    assert not [c for c in out.columns if c.startswith("steal_share_cpu")]  # kept narrow
    assert telemetry_rates.cpu_list("0,2-3") == [0, 2, 3] and telemetry_rates.cpu_list(None) is None


def test_cgroup_dirs_v1_and_v2(tmp_path):
    v1 = cgroups.process_folders("5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n2:pids:/x\n", tmp_path)
    assert v1 == {
        "cpu": tmp_path / "cpu,cpuacct/docker/abc",
        "cpuacct": tmp_path / "cpu,cpuacct/docker/abc",
        "memory": tmp_path / "memory/docker/abc",
    }
    assert cgroups.process_folders("0::/system.slice/x\n", tmp_path) == {"v2": tmp_path / "system.slice/x"}


@pytest.mark.skipif(os.geteuid() != 0, reason="makes cgroups")
def test_sampler_sees_a_busy_process_throttled_by_its_quota(tmp_path):
    folders = cgroups.create("telemetry-test", cpus=0.2, memory="64m")
    proc = None
    try:
        proc = subprocess.Popen(
            ["sh", "-c", "while :; do :; done"], preexec_fn=lambda: cgroups.join(folders, os.getpid())
        )
        path = tmp_path / "telemetry.tsv"
        with telemetry.Sampler(path, 0.2, lambda name: proc.pid) as sampler:
            sampler.watch("busy")
            sampler.wait_samples()  # the interval below starts after a sample of busy
            start = time.time()
            time.sleep(1.5)
            end = time.time()
    finally:
        if proc:
            proc.kill()
            proc.wait()
        cgroups.kill_and_remove("telemetry-test")
    tel = telemetry_rates.read(path)
    assert sampler.samples >= 5 and set(tel["source"]) == {"host", "busy"}
    busy = telemetry_rates.per_interval(tel, "busy", start, end)
    assert busy["nr_throttled"] > 0 and 0 < busy["throttled"] <= 1.05
    assert busy["memory_failcnt"] == 0 and busy["oom_kill"] == 0
    host = telemetry_rates.per_interval(tel, "host", start + 0.3, end - 0.3)
    assert host["ctxt_per_s"] > 0 and 0 <= host.get("psi_cpu_some", 0) <= 1


def test_attach_gives_each_row_its_members_entity_and_the_host():
    tel = pd.DataFrame(
        [(t, "host", "psi_cpu_some_us", 500_000 * t) for t in (0.0, 1.0, 2.0, 3.0)]
        + [(t, "c1", "throttled_ns", 250_000_000 * t) for t in (0.0, 1.0, 2.0)]
        + [(t, "c2", "nr_throttled", 10 * t) for t in (1.0, 2.0, 3.0)],
        columns=telemetry.COLUMNS,
    )
    meta = {
        "telemetry": {"interval_s": 1.0, "file": "telemetry.tsv"},
        "containers": [
            {"name": "c1", "role": "member1"},
            {"name": "c2", "role": "member2"},
            {"name": "s", "role": "server for member1"},
        ],
    }
    df = pd.DataFrame({"start": [0.5, 1.0, 3.2], "end": [1.5, 3.0, 3.5], "member": [1, 2, 1]})
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        tel.to_csv(Path(d) / "telemetry.tsv", sep="\t", index=False)
        out = telemetry_rates.attach(df, meta, Path(d))
    assert out.loc[0, "psi_cpu_some"] == pytest.approx(0.5) and out.loc[0, "throttled"] == pytest.approx(0.25)
    assert out.loc[1, "nr_throttled"] == pytest.approx(20) and pd.isna(out.loc[1, "throttled"])
    # Past the host's last sample: no host value; c1 ended at 2 s, before the row began.
    assert pd.isna(out.loc[2, "psi_cpu_some"]) and pd.isna(out.loc[2, "throttled"])


def test_contention_relates_each_iteration_to_its_case1_mean():
    from interference.studies.pairs.statistics.iteration_telemetry import contention

    rows = []
    for case, partner, values, psi in (("1", "", [10.0, 12.0], 0.0), ("3a", "S", [5.5, 5.5], 0.4)):
        for i, v in enumerate(values, 1):
            for metric, hib, value in (("gflops", True, v), ("seconds", False, v)):
                rows.append({"host": "h", "runtime": "docker", "case": case, "target": "L", "partner": partner,
                             "member": 1, "repetition": 1, "iteration": i, "metric": metric, "value": value,
                             "higher_is_better": hib, "in_overlap": True, "status": "ok",
                             "psi_cpu_some": str(psi), "throttled": ""})  # fmt: skip
    rows.append({**rows[-1], "iteration": 9, "status": "exit 1", "value": None})
    out = contention(pd.DataFrame(rows)).set_index(["case", "metric", "iteration"])
    assert out.loc[("3a", "gflops", 1), "relative"] == pytest.approx(0.5)  # 5.5 / 11: worse
    assert out.loc[("3a", "seconds", 1), "relative"] == pytest.approx(2.0)  # 11 / 5.5: better
    assert out.loc[("3a", "gflops", 1), "psi_cpu_some"] == pytest.approx(0.4)
    assert out["throttled"].isna().all() and out["oom_kill"].isna().all()
    assert ("3a", "seconds", 9) not in out.index  # a failed iteration has no performance


def test_no_telemetry_columns_give_an_empty_table():
    from interference.studies.pairs.statistics.iteration_telemetry import COLUMNS, contention

    assert list(contention(pd.DataFrame({"value": [1.0], "status": ["ok"]})).columns) == COLUMNS
