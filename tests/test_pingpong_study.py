"""Paper 003's ping-pong study without the workflow: run keys per runtime, refusals before
anything runs (sizes, layers, runtimes, a missing overlay tool), ApacheBench's parser, the
statistics on hand-made samples, our C services answering exactly m bytes through ping, and the
two simulated hosts for real — a container's bridge and NAT, VXLAN and encrypted tinc carrying
HTTP between them, then nothing left."""

import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, netns_process
from interference import parsers, studies
from interference.steps.config import ConfigError, validate
from interference.studies.pingpong import MAX_MESSAGE_BYTES, fabric
from interference.studies.pingpong.parse import SAMPLE_COLUMNS
from interference.studies.pingpong.statistics import relative, rsd

SOURCE = REPO / "containers/httppingpong/pingpong.c"


def pingpong_cfg(runtimes, **part) -> dict:
    return validate({"runtimes": runtimes, "studies": {"pingpong": part}})["studies"]["pingpong"]


def test_runs_per_runtime():
    study = studies.get("pingpong")
    cfg = pingpong_cfg(["baremetal", "docker", "lxc"], repetitions=2)
    keys = lambda rt: sorted({r.key for r in study.runs_on(cfg, rt)})  # noqa: E731
    assert keys("baremetal") == ["loopback", "reference"]
    assert keys("docker") == keys("lxc") == ["container", "encrypted", "overlay", "overlay-userspace"]
    assert len(study.runs(cfg)) == 12  # 6 layers × 2 repetitions (docker's and lxc's coincide)
    s = study.settings(cfg, "encrypted")
    assert s["layer"] == "encrypted" and s["message_sizes"] == [10, 100, 1000, 10000, 100000, 1000000]
    assert study.run_images(cfg, "reference") == ["HP"]


@pytest.mark.parametrize(
    ("runtimes", "part", "message"),
    [
        (["docker"], {"message_sizes": [0, 10]}, "0 is less than the minimum of 1"),
        (["docker"], {"message_sizes": [MAX_MESSAGE_BYTES + 1]}, "is greater than the maximum"),
        (["docker"], {"layers": ["weave"]}, "weave"),
        (["vm"], {}, "vm can run no layer"),
        (["apptainer"], {}, "apptainer can run no layer"),
        (["docker"], {"layers": ["reference"]}, "docker runs none of the layers"),
    ],
)
def test_refused_before_anything_runs(runtimes, part, message):
    with pytest.raises(ConfigError, match=message):
        pingpong_cfg(runtimes, **part)


def test_a_missing_overlay_tool_is_named(tmp_path, monkeypatch):
    # A PATH with every tool the study needs but tincd: the real probe finds it missing.
    for tool in ("ip", "iptables", "nsenter", "unshare", "ab", "sh"):
        found = subprocess.run(
            ["sh", "-c", f"command -v {tool}"], capture_output=True, text=True
        ).stdout.strip()
        (tmp_path / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fabric.missing({"vxlan"}) == []
    with pytest.raises(ConfigError, match=r"need, on this machine, tinc \(`tincd`"):
        pingpong_cfg(["docker"], layers=["encrypted"])
    pingpong_cfg(["docker"], layers=["overlay"])  # VXLAN needs no daemon


AB_OUTPUT = """Document Path:          /?m=100
Document Length:        100 bytes

Concurrency Level:      1
Time taken for tests:   1.000 seconds
Complete requests:      9000
Failed requests:        0
Keep-Alive requests:    9000
Total transferred:      1800000 bytes
HTML transferred:       900000 bytes
Requests per second:    9000.00 [#/sec] (mean)
Time per request:       0.111 [ms] (mean)
Time per request:       0.111 [ms] (mean, across all concurrent requests)
Transfer rate:          1757.81 [Kbytes/sec] received

Percentage of the requests served within a certain time (ms)
  50%      0
 100%      3 (longest request)
"""


def test_ab_parser():
    parse = parsers.get("ab")
    assert parse(AB_OUTPUT, "") == {"transfer_rate": 1757.81, "requests": 9000.0, "time_per_request": 0.111}
    with pytest.raises(parsers.ParseError, match="3 failed and 0 non-2xx of 9000"):
        parse(AB_OUTPUT.replace("Failed requests:        0", "Failed requests:        3"), "")
    with pytest.raises(parsers.ParseError, match="ab error: apr_socket_recv"):
        parse("", "apr_socket_recv: Connection refused (111)\n")
    with pytest.raises(parsers.ParseError, match="truncated"):
        parse(AB_OUTPUT.split("Requests per second")[0], "")


def samples(rows, per_run: int = 0) -> pd.DataFrame:
    """Sample rows: one run of all the values, or runs of per_run values each."""
    out = []
    for rt, layer, m, values in rows:
        for i, v in enumerate(values, 1):
            run = (i - 1) // per_run + 1 if per_run else 1
            out.append({"host": "h", "runtime": rt, "layer": layer, "message_bytes": m, "repetition": run,
                        "iteration": i, "metric": "transfer_rate", "value": v, "unit": "KiB/s",
                        "higher_is_better": True, "start": 0, "end": 2, "status": "ok"})  # fmt: skip
    return pd.DataFrame(out, columns=SAMPLE_COLUMNS)


def test_ratios_per_layer_and_size(tmp_path):
    rows = [
        ("baremetal", "loopback", 10, [110, 110, 110]),
        ("baremetal", "reference", 10, [100, 102, 98]),
        ("docker", "container", 10, [80, 82, 78]),
        ("docker", "overlay-userspace", 10, [60, 61, 59]),
        ("docker", "encrypted", 10, [54, 55, 53]),
        ("baremetal", "reference", 1000, [1000, 1010, 990]),
        ("docker", "container", 1000, [900, 910, 890]),
    ]
    path = tmp_path / "samples.tsv"
    samples(rows).to_csv(path, sep="\t", index=False)
    rel = relative({"samples": path}, 1).set_index(["layer", "baseline", "message_bytes"])
    assert rel.loc[("container", "reference", "10"), "ratio"] == pytest.approx(0.8)
    assert rel.loc[("container", "reference", "1000"), "ratio"] == pytest.approx(0.9)
    assert rel.loc[("encrypted", "overlay-userspace", "10"), "ratio"] == pytest.approx(0.9)
    assert rel.loc[("reference", "loopback", "10"), "baseline_runtime"] == "baremetal"
    assert len(rel.loc[[("reference", "loopback", "10")]]) == 1  # once, not once per container runtime
    row = rel.loc[("container", "reference", "10")]
    assert row["ci_low"] < 0.8 < row["ci_high"]
    assert ("overlay-userspace", "reference", "1000") not in rel.index  # no overlay at 1000
    table = rsd({"samples": path}, 1).set_index("layer")
    assert table.loc["reference", "sizes"] == 2
    assert table.loc["reference", "max_rsd"] == pytest.approx(2.0)  # SD 2 (or 10) over mean 100 (or 1000)
    assert table.loc["loopback", "min_rsd"] == 0


@pytest.fixture(scope="module")
def services(tmp_path_factory) -> Path:
    binary = tmp_path_factory.mktemp("services") / "pingpong"
    subprocess.run(["gcc", "-O2", "-pthread", "-o", str(binary), str(SOURCE)], check=True)
    return binary


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read()


def wait_for(url: str) -> bytes:
    deadline = time.time() + 15
    while True:
        try:
            return get(url)
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def start(argv, prefix=()) -> subprocess.Popen:
    return subprocess.Popen([*prefix, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kernel_cpu_s(pid: int) -> float:
    """A process's user + system CPU time as the kernel accounts it: /proc/<pid>/stat's utime and
    stime (fields 14 and 15, in clock ticks; the fields after the command's closing parenthesis
    start at field 3)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assert_cpu_is_the_kernels(url: str, pid: int) -> None:
    """GET /cpu answers the service's own CPU seconds: between the kernel's account of the process
    just before and just after (within a clock tick, /proc's resolution), and not zero once it
    has served something."""
    tick = 1 / os.sysconf("SC_CLK_TCK")
    before = kernel_cpu_s(pid)
    cpu = float(get(url))
    after = kernel_cpu_s(pid)
    assert cpu > 0 and before - tick <= cpu <= after + tick, (before, cpu, after)


def test_ping_relays_exactly_m_bytes_from_pong(services):
    procs = [start([services, "pong", 28081]), start([services, "ping", 28080, "127.0.0.1", 28081])]
    try:
        assert wait_for("http://127.0.0.1:28080/?m=0") == b""
        for m in (1, 1000, 300_000, 3_000_000):
            assert get(f"http://127.0.0.1:28080/?m={m}") == b"x" * m
        assert_cpu_is_the_kernels("http://127.0.0.1:28081/cpu", procs[0].pid)
        for bad in ("-1", str(64 * 1024 * 1024 + 1), "abc"):
            with pytest.raises(urllib.error.HTTPError, match="400"):
                get(f"http://127.0.0.1:28080/?m={bad}")
        procs[0].kill()  # pong gone: ping says so
        procs[0].wait()
        with pytest.raises(urllib.error.HTTPError, match="502"):
            get("http://127.0.0.1:28080/?m=10")
    finally:
        for p in procs:
            p.kill()
            p.wait()


def entity() -> subprocess.Popen:
    """A process in a network namespace of its own with only loopback: what a container runtime
    hands the study (network_mode none)."""
    return netns_process(300)


@pytest.mark.parametrize("overlay", [None, "vxlan", "tinc"])
def test_two_hosts_carry_http_through_each_layer(services, tmp_path, overlay):
    ents, procs = {"a": entity(), "b": entity()}, []
    try:
        with fabric.Fabric(f"test{overlay or 'none'}", tmp_path, time.time() + 120) as net:
            net.attach_container("a", ents["a"].pid, 28080)
            net.attach_container("b", ents["b"].pid, 28081)
            upstream = net.address("b")
            if overlay:
                info = net.vxlan() if overlay == "vxlan" else net.tinc(encrypted=True)
                for h, p in ents.items():
                    net.attach_overlay(h, p.pid)
                upstream = net.overlay_address("b")
                assert info["cipher"] == ("none" if overlay == "vxlan" else fabric.TINC_CIPHER)
            inside = lambda h: ["nsenter", "-t", str(ents[h].pid), "-n"]  # noqa: E731
            procs.append(start([services, "pong", 28081], inside("b")))
            procs.append(start([services, "ping", 28080, upstream, 28081], inside("a")))
            # From this machine's namespace to ping's published port on host a, and on to pong.
            assert wait_for(f"http://{net.address('a')}:28080/?m=5000") == b"x" * 5000
            pong = procs[0].pid  # nsenter execs pong: its process is pong's
            assert_cpu_is_the_kernels(f"http://{net.address('b')}:28081/cpu", pong)
            if overlay == "tinc":
                assert (
                    "Connection with"
                    in (tmp_path / "tinc-a.log").read_text() + (tmp_path / "tinc-b.log").read_text()
                )
            assert fabric.leftovers()
    finally:
        for p in [*procs, *ents.values()]:
            p.kill()
            p.wait()
    assert fabric.leftovers() == []
    assert not any(p.name.startswith("test") for p in fabric.STATE_DIR.glob("*"))


def test_remove_all_takes_a_killed_runs_hosts():
    net = fabric.Fabric("killedrun0", Path("/tmp"), time.time() + 60)
    net.__enter__()  # as a run killed with SIGKILL leaves it: never closed
    assert any("killedru" in x for x in fabric.leftovers())
    removed = fabric.remove_all()
    assert any("killedru" in x for x in removed) and fabric.leftovers() == []
    assert os.path.exists("/run/netns") and not any("killedru" in n for n in os.listdir("/run/netns"))


def render_method(tmp_path, cpu: float | None, hosts: dict) -> str:
    """The section's method text from a stats folder: ping's and pong's CPU use (cores) and the
    recorded hosts (environment.json)."""
    import json

    from interference.rendering.document import Document
    from interference.studies.pingpong.section import section

    (tmp_path / "pingpong").mkdir()
    rows = [("h", "docker", "container", 100, "rate", 5000.0, 10.0)]
    if cpu is not None:
        rows += [("h", "docker", "container", 100, "ping_cpu", cpu, 0.01),
                 ("h", "docker", "container", 100, "pong_cpu", cpu / 2, 0.01)]  # fmt: skip
    pd.DataFrame(rows, columns=["host", "runtime", "layer", "message_bytes", "metric", "mean", "sd"]).to_csv(
        tmp_path / "pingpong/summary.tsv", sep="\t", index=False
    )
    (tmp_path / "environment.json").write_text(json.dumps({"hosts": hosts}))
    return "\n".join(b.content for b in section(Document(tmp_path)).method())


@pytest.mark.parametrize(
    ("cpu", "hosts", "said", "unsaid"),
    [
        (0.4, {"h": {"cores": 2}}, ["are not the bottleneck", "0.40 of its one core", "this machine's 2 cores"],
         ["may be"]),
        (0.97, {"h": {"cores": 8}}, ["may be the bottleneck", "0.97 of its one core", "this machine's 8 cores"],
         ["are not the bottleneck", "2 cores"]),
        (None, {}, ["cannot be told", "their number was not recorded"], ["bottleneck (", "machine's 2 cores"]),
    ],
)  # fmt: skip
def test_method_text_follows_cpu_use_and_recorded_cores(tmp_path, cpu, hosts, said, unsaid):
    text = render_method(tmp_path, cpu, hosts)
    # Facts about a machine nothing records are not asserted.
    assert "absent on this kernel" not in text and "no registry is reachable" not in text
    for s in said:
        assert s in text
    for s in unsaid:
        assert s not in text


@pytest.mark.parametrize(
    ("container", "per_run", "verdict"),
    [
        ([80, 81, 79, 80, 80, 81], 2, "reproduced"),  # 003-5: about 80 % (0.7 to 0.9) for small messages
        ([50, 51, 49, 50, 50, 51], 2, "not reproduced"),
        ([80, 81, 79], 1, "reproduced"),  # 3 runs of 1 test: a runs-level interval, judged
        ([80, 81, 79], 0, "inconclusive"),  # the same 3 tests in one run: its iterations only
        ([50, 51, 49, 50, 50, 51], 0, "inconclusive"),  # one run: its iterations only
    ],
)
def test_the_section_shows_the_scorecards_verdict_on_its_ratios(tmp_path, container, per_run, verdict):
    """003-5 scored by the findings step on the study's relative.tsv, and the section showing
    that row: the section judges nothing itself. Its interval covers runs (3 runs of 2 tests);
    one run's 6 tests decide nothing, however far from the claim."""
    from interference.rendering.document import Document
    from interference.rendering.findings_section import study_blocks
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write

    rows = [
        ("baremetal", "reference", 10, [100, 101, 99, 100, 100, 101]),
        ("docker", "container", 10, container),
    ]
    path = tmp_path / "samples.tsv"
    samples(rows, per_run).to_csv(path, sep="\t", index=False)
    write(relative({"samples": path}, 1), tmp_path / "pingpong/relative.tsv")
    (tmp_path / "environment.json").write_text("{}")
    published = REPO / "report/published"
    entry = [e for e in sc.load_catalogue(published / "findings.yaml") if e["id"] == "003-5"]
    card = sc.scorecard(entry, tmp_path, ["pingpong"], published)
    assert card["verdict"].tolist() == [verdict], card.to_dict("records")
    assert card["level"].tolist() == ["runs" if per_run else "iterations"]
    if not per_run:
        assert "iterations only" in card["reason"].iloc[0]
    write(card, tmp_path / "findings.tsv")
    text = "\n".join(b.content for b in study_blocks(Document(tmp_path), "pingpong"))
    assert "**003-5**" in text and f"*{verdict}*" in text, text
