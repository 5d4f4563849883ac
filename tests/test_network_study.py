"""Paper 001's network study (Tables II and III): run keys per runtime (a VM has no host network,
nested children run PARENT+CHILD modes towards the host, bare metal only host to host), refusals
before anything runs, statistics on hand-made samples, the transcribed tables, and a real Open
vSwitch bridge with a veth into a network namespace (the userspace datapath this kernel allows)."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, listening, netns_process
from interference import studies
from interference.runtimes import bridges, ovs
from interference.steps.config import ConfigError, validate
from interference.studies.network import published
from interference.studies.network.parse import SAMPLE_COLUMNS
from interference.studies.network.statistics import relative


def network_cfg(runtimes, **part) -> dict:
    return validate({"runtimes": runtimes, "studies": {"network": part}})["studies"]["network"]


def test_runs_per_runtime():
    study = studies.get("network")
    cfg = network_cfg(
        ["baremetal", "docker", "vm", "nested"], microservices=["NS"], nested_modes=["ovs+bridge"]
    )
    keys = lambda rt: [r.key for r in study.runs_on(cfg, rt)]  # noqa: E731
    assert keys("baremetal") == ["NS/to-host/host"]
    assert keys("docker") == [
        f"NS/{d}/{m}" for d in ("to-host", "from-host") for m in ("host", "bridge", "ovs")
    ]
    assert keys("vm") == [f"NS/{d}/{m}" for d in ("to-host", "from-host") for m in ("bridge", "ovs")]
    assert keys("nested") == ["NS/to-host/ovs+bridge"]  # the host reaches no child
    assert all(re.fullmatch(study.key_pattern, r.key) for r in study.runs(cfg))
    s = study.settings(cfg, "NS/from-host/ovs")
    assert (s["microservice"], s["direction"], s["mode"]) == ("NS", "from-host", "ovs")
    assert study.network_mode(s) == "ovs" and study.run_images(cfg, "NS/from-host/ovs") == ["NS"]


@pytest.mark.parametrize(
    ("runtimes", "part", "message"),
    [
        (["apptainer"], {}, "apptainer has no network modes"),
        (["docker"], {"modes": ["macvlan"]}, "macvlan"),
        (["nested"], {"nested_modes": ["ovs+ovs"]}, "ovs\\+ovs"),
        (["vm"], {"modes": ["host"]}, "vm runs none of the modes"),
    ],
)
def test_refused_before_anything_runs(runtimes, part, message):
    with pytest.raises(ConfigError, match=message):
        network_cfg(runtimes, **part)


def samples(rows) -> pd.DataFrame:
    out = []
    for rt, d, m, metric, values in rows:
        for i, v in enumerate(values, 1):
            out.append({"host": "h", "runtime": rt, "microservice": "NS", "direction": d, "mode": m,
                        "repetition": 1, "iteration": i, "metric": metric, "value": v, "unit": "Mbit/s",
                        "higher_is_better": True, "start": 0, "end": 1, "status": "ok"})  # fmt: skip
    return pd.DataFrame(out, columns=SAMPLE_COLUMNS)


def test_relative_to_bare_metal(tmp_path):
    path = tmp_path / "samples.tsv"
    samples(
        [
            ("baremetal", "to-host", "host", "throughput", [100, 102, 98]),
            ("docker", "to-host", "bridge", "throughput", [50, 51, 49]),
            ("docker", "to-host", "bridge", "throughput", []),
        ]
    ).to_csv(path, sep="\t", index=False)
    d = relative({"samples": path}, 1).set_index("runtime")
    assert d.loc["baremetal", "ratio"] == pytest.approx(1.0)
    assert d.loc["docker", "ratio"] == pytest.approx(0.5)
    assert d.loc["docker", "ci_low"] < 0.5 < d.loc["docker", "ci_high"]
    assert (d["reference"] == "baremetal/to-host/host").all()


def test_published_ratios_are_relative_to_the_papers_host_to_host():
    # Table II: Host - Container on the host network, 34.96 Gbps and 105.0 µs, against Host - Host's
    # 35.71 Gbps and 102.77 µs.
    tput, lat = published.relative("container", "from-host", "host")
    assert tput == pytest.approx(34.96 / 35.71) and lat == pytest.approx(105.0 / 102.77)
    assert published.relative("vm", "to-host", "host") is None  # the paper's "-"
    assert published.entity_of("podman") == "container" and published.entity_of("nested") == "nested"


@pytest.mark.skipif(bool(ovs.missing()), reason="Open vSwitch or ethtool missing (scripts/ensure-engine.sh)")
def test_ovs_bridge_carries_traffic_and_goes_away():
    run_id = "testovs0001"
    switch = ovs.OvsSwitch(run_id)
    sleeper = netns_process()
    try:
        switch.ensure()
        address = switch.attach_netns("member", sleeper.pid)
        assert address.startswith("10.232.") and switch.address_of("member") == address
        # A TCP connection from the namespace to the host's address on the bridge, through ovs-vswitchd.
        serve = "import socket; s=socket.create_server(('', 45871)); print('listening', flush=True); "
        server = listening(["python3", "-c", serve + "c, _ = s.accept(); c.sendall(b'pong')"])
        try:
            probe = "import socket,sys; print(socket.create_connection((sys.argv[1], 45871), 5).recv(4))"
            r = subprocess.run(
                ["nsenter", "--target", str(sleeper.pid), "--net", "python3", "-c", probe, switch.gateway()],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert "pong" in r.stdout, r.stderr
        finally:
            server.kill()
        # The gateway's MAC is the bridge's, not the port's host end: routed packets (to another
        # host) must go through the switch, where FORWARD accepts them.
        ns = ["nsenter", "--target", str(sleeper.pid), "--net"]
        neigh = subprocess.run([*ns, "ip", "neigh", "show", switch.gateway()], capture_output=True, text=True)
        bridge_mac = Path(f"/sys/class/net/{switch.bridge}/address").read_text().strip()
        assert bridge_mac in neigh.stdout, neigh.stdout
        rules = subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True).stdout
        assert f"-i {switch.bridge} -j ACCEPT" in rules and f"-o {switch.bridge} -j ACCEPT" in rules
        assert "datapath_type" in switch.vsctl("list", "bridge").stdout
        assert "netdev" in switch.vsctl("get", "bridge", switch.bridge, "datapath_type").stdout
    finally:
        removed = ovs.remove_labelled(ovs.RUN_LABEL, run_id)
        sleeper.kill()
    assert any("ovs bridge" in r for r in removed)
    assert ovs.switches_left() == []


def test_a_gateway_bridge_reaches_another_network_and_goes_away(tmp_path):
    """The network study's "bridge" mode for LXC, VMs and nested children of a parent on the host
    network: an entity on a Linux bridge with the host as gateway opens a TCP connection to a
    server on another of this machine's networks (a veth into a second namespace: another host's
    stand-in), through FORWARD and NAT; removing the bridge takes its rules."""
    net = bridges.Bridges(tmp_path)
    client, server_ns = netns_process(), netns_process()
    ns = lambda p: ["nsenter", "--target", str(p.pid), "--net"]  # noqa: E731
    ip = lambda *a: subprocess.run(["ip", *a], check=True, capture_output=True)  # noqa: E731
    try:
        state = net.create("gwtest", {"test": "gateway"}, gateway=True)
        address, prefix, bridge = net.address_for("gwtest", "member")
        ip("link", "add", "itgc0", "type", "veth", "peer", "name", "itgc1")
        ip("link", "set", "itgc0", "master", bridge, "up")
        ip("link", "set", "itgc1", "netns", str(client.pid))
        ip("link", "add", "itgs0", "type", "veth", "peer", "name", "itgs1")
        ip("addr", "add", "10.233.9.1/30", "dev", "itgs0")
        ip("link", "set", "itgs0", "up")
        ip("link", "set", "itgs1", "netns", str(server_ns.pid))
        for p, dev, addr, gw in ((client, "itgc1", f"{address}/{prefix}", state["gateway"]),
                                 (server_ns, "itgs1", "10.233.9.2/30", "10.233.9.1")):  # fmt: skip
            subprocess.run([*ns(p), "ip", "addr", "add", addr, "dev", dev], check=True)
            subprocess.run([*ns(p), "ip", "link", "set", dev, "up"], check=True)
            subprocess.run([*ns(p), "ip", "route", "add", "default", "via", gw], check=True)
        serve = (
            "import socket; s=socket.create_server(('', 45872)); print('listening', flush=True); "
            "c, a = s.accept(); c.sendall(a[0].encode())"
        )
        server = listening([*ns(server_ns), "python3", "-c", serve])
        try:
            probe = "import socket; print(socket.create_connection(('10.233.9.2', 45872), 5).recv(64))"
            r = subprocess.run(
                [*ns(client), "python3", "-c", probe], capture_output=True, text=True, timeout=30
            )
            assert "10.233.9.1" in r.stdout, r.stderr  # the server saw the host's address: NAT
        finally:
            server.kill()
    finally:
        for dev in ("itgc0", "itgs0"):
            subprocess.run(["ip", "link", "del", dev], capture_output=True)
        for name in net.labelled("test", "gateway"):
            net.remove(name)
        client.kill()
        server_ns.kill()
    rules = subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
    assert bridges.bridge_name("gwtest") not in rules


def render(tmp_path, rows, env=None):
    """The network section on a stats folder holding relative.tsv's rows (runtime, direction, mode,
    metric, mean, sd, ratio) and environment.json."""
    import json

    from interference.rendering.document import Document
    from interference.studies.network.section import section

    (tmp_path / "network").mkdir(parents=True, exist_ok=True)
    cols = [
        "host",
        "runtime",
        "direction",
        "mode",
        "metric",
        "n",
        "mean",
        "sd",
        "reference",
        "ratio",
        "ci_low",
        "ci_high",
    ]
    pd.DataFrame(
        [
            ("h", rt, d, m, metric, 5, mean, sd, f"host/{d}/host", ratio, ratio * 0.9, ratio * 1.1)
            for rt, d, m, metric, mean, sd, ratio in rows
        ],
        columns=cols,
    ).to_csv(tmp_path / "network/relative.tsv", sep="\t", index=False)
    (tmp_path / "environment.json").write_text(json.dumps(env or {}))
    s = section(Document(tmp_path))
    return "\n".join(b.content for b in s.method())


def figure_caption(tmp_path, rows) -> str:
    from interference.rendering.document import Document
    from interference.studies.network.section import section

    render(tmp_path, rows)
    return "\n".join(str(b.content) for b in section(Document(tmp_path)).figure())


def rows_of(host_sd: float, bridge_latency: float):
    return [
        ("baremetal", "to-host", "host", "throughput", 100.0, host_sd, 1.0),
        ("docker", "to-host", "host", "throughput", 98.0, 1.0, 0.98),
        ("docker", "to-host", "bridge", "throughput", 50.0, 1.0, 0.5),
        ("docker", "to-host", "host", "latency", 20.0, 1.0, 1.0),
        ("docker", "to-host", "bridge", "latency", 20.0 * bridge_latency, 1.0, bridge_latency),
        ("vm", "to-host", "bridge", "throughput", 20.0, 1.0, 0.2),
    ]


def test_the_figure_cites_the_tables_of_the_directions_it_shows(tmp_path):
    local = rows_of(host_sd=2.0, bridge_latency=1.1)
    remote = [("baremetal", "to-remote", "host", "throughput", 90.0, 1.0, 1.0),
              ("docker", "to-remote", "ovs", "throughput", 3.0, 0.1, 0.03)]  # fmt: skip
    only_local = figure_caption(tmp_path / "a", local)
    both = figure_caption(tmp_path / "b", local + remote)
    assert "relative to host/to-host/host" in only_local and "(Tables II and III, over" in only_local
    assert "same direction (host/to-host/host, host/to-remote/host)" in both
    assert "(Tables II and III and Tables IV and V, over" in both


def test_vm_sentences_follow_the_recorded_acceleration(tmp_path):
    rows = rows_of(host_sd=2.0, bridge_latency=1.1)
    tcg = {
        "engines": {"vm": {"engine": "QEMU (TCG)", "details": {"acceleration": "tcg (no usable /dev/kvm)"}}}
    }
    kvm = {"engines": {"vm": {"engine": "QEMU (KVM)", "details": {"acceleration": "kvm (/dev/kvm)"}}}}
    method = render(tmp_path / "tcg", rows, tcg)
    assert "under QEMU's TCG emulation (no usable /dev/kvm)" in method
    assert "PVM" not in method
    method = render(tmp_path / "kvm", rows, kvm)
    assert "ran under KVM" in method
    assert "TCG" not in method
    method = render(tmp_path / "none", rows, {})
    assert "was not recorded" in method
    method = render(tmp_path / "novm", [r for r in rows if r[0] != "vm"], tcg)
    assert "`vm` runtime" not in method


def test_the_section_shows_the_scorecards_verdict_on_its_rows(tmp_path):
    """001-8 (a container on the host's network ≈ bare metal's throughput, 0.90 to 1.10) scored by
    the findings step on relative.tsv and shown by the section: Docker's 0.98 with 5 samples over
    runs and an SD of 1 % is reproduced, 0.80 is not, 2 runs of one sample are judged by their
    interval, and one run's iterations decide nothing. The section judges nothing."""
    from interference.rendering.document import Document
    from interference.rendering.findings_section import study_blocks
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write

    published = REPO / "report/published"
    entry = [e for e in sc.load_catalogue(published / "findings.yaml") if e["id"] == "001-8"]

    def shown(n, docker_mean, level="runs"):
        rows = [("baremetal", "to-host", "host", "throughput", 100.0, 1.0, 1.0),
                ("docker", "to-host", "host", "throughput", docker_mean, 1.0, docker_mean / 100)]  # fmt: skip
        d = tmp_path / f"{n}-{docker_mean}"
        render(d, rows)
        rel = pd.read_csv(d / "network/relative.tsv", sep="\t")
        # The bootstrap CI the statistics would give, here a normal one from the SDs.
        half = 1.96 * np.sqrt(2) * 1.0 / np.sqrt(n) / 100
        rel = rel.assign(n=n, ci_low=rel["ratio"] - half, ci_high=rel["ratio"] + half)
        if level:  # else a table made before ci_level: one run's iterations
            rel = rel.assign(ci_level=level)
        rel.to_csv(d / "network/relative.tsv", sep="\t", index=False)
        card = sc.scorecard(entry, d, ["network"], published)
        write(card, d / "findings.tsv")
        text = "\n".join(b.content for b in study_blocks(Document(d), "network"))
        assert "**001-8**" in text and f"*{card['verdict'].iloc[0]}*" in text, text
        return card["verdict"].iloc[0], text

    assert shown(5, 98.0)[0] == "reproduced"
    assert shown(5, 80.0)[0] == "not reproduced"
    # Two runs of one sample a side: a runs-level interval is judged whatever its samples (the
    # samples gate counts runs, verdict.too_few_samples).
    verdict, text = shown(2, 98.0)
    assert verdict == "reproduced" and "too few samples" not in text
    # One run's iterations (or a table that does not say, made when every cell ran once) decide nothing.
    for level in ("iterations", ""):
        verdict, text = shown(5, 80.0, level)
        assert verdict == "inconclusive" and "iterations only" in text, text


@pytest.mark.parametrize(
    ("per_run", "level", "verdict"), [(2, "runs", "reproduced"), (0, "iterations", "inconclusive")]
)
def test_a_ratio_of_two_rows_is_judged_at_the_level_of_their_runs(tmp_path, per_run, level, verdict):
    """001-14 (nested bridge+bridge over Docker's bridge below 0.95; here 0.8) from relative.tsv's
    two rows: with 3 runs of 2 tests a row, the delta method on the run means (level runs)
    decides; the same 6 tests in one run a row decide nothing."""
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write

    published = REPO / "report/published"
    entry = [e for e in sc.load_catalogue(published / "findings.yaml") if e["id"] == "001-14"]
    rows = [("baremetal", "to-host", "host", "throughput", [100, 101, 99, 100, 102, 98]),
            ("docker", "to-host", "bridge", "throughput", [80, 81, 79, 80, 82, 78]),
            ("nested", "to-host", "bridge+bridge", "throughput", [64 + d for d in (0, 1, -1, 0, 1, -1)])]  # fmt: skip
    path = tmp_path / "samples.tsv"
    table = samples(rows)
    if per_run:
        table["repetition"] = (table["iteration"] - 1) // per_run + 1
    table.to_csv(path, sep="\t", index=False)
    write(relative({"samples": path}, 1), tmp_path / "network/relative.tsv")
    (tmp_path / "environment.json").write_text("{}")
    card = sc.scorecard(entry, tmp_path, ["network"], published)
    assert card[["verdict", "level"]].values.tolist() == [[verdict, level]], card.to_dict("records")


def test_the_method_counts_the_tests_the_runs_recorded(tmp_path):
    """'N tests per run' is runs.tsv's n_iterations, not the config's iterations."""
    rows = [("baremetal", "to-host", "host", "throughput", 10.0, 0.1, 1.0)]
    env = {"config": {"studies": {"network": {"iterations": 99, "duration_s": 3}}}}
    method = render(tmp_path, rows, env)
    assert "an unrecorded number of tests per run" in method and "99" not in method
    runs = pd.DataFrame({"host": "h", "runtime": "docker", "study": "network", "key": ["a", "b"],
                         "repetition": 1, "n_iterations": [5, 4]})  # fmt: skip
    runs.to_csv(tmp_path / "network/runs.tsv", sep="\t", index=False)
    method = render(tmp_path, rows, env)
    assert "4–5 tests per run" in method and "iperf3's TCP stream, 3 s" in method


def iperf3_client(folder: Path, ready_after_s: float):
    """A microservice whose run is a real iperf3 client of a free local port (no other test's
    server answers it), declaring iperf3's refusal as its server's not-ready message; and the port."""
    import socket
    from types import SimpleNamespace

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (folder / "ms").mkdir()
    run = folder / "ms" / "run"
    run.write_text(f'#!/bin/sh\nexec iperf3 --client "$SERVER_HOST" --port {port} --time 1 --json\n')
    run.chmod(0o755)
    server = {"ready_after_s": ready_after_s, "not_ready": "Connection refused"}
    return SimpleNamespace(folder=folder / "ms", server=server), port


def test_the_host_client_makes_again_an_attempt_the_server_was_not_listening_for(tmp_path):
    """A server in a guest may listen only seconds after its start: the host's client loop (real
    iperf3) makes again each attempt that said "Connection refused" and measures once it listens."""
    import json
    import threading
    import time

    from interference.core.loop import read_iterations
    from interference.studies.network import host_side

    ms, port = iperf3_client(tmp_path, ready_after_s=0.3)
    out = tmp_path / "client"
    with host_side.Processes(tmp_path, time.time() + 60) as host:
        # The server starts 1.2 s late: the first attempts find nothing listening.
        late = threading.Timer(
            1.2, host.start_server, (["iperf3", "--server", "--port", str(port)], "server")
        )
        late.start()
        try:
            host.client_loop(ms, {"SERVER_HOST": "127.0.0.1"}, out, iterations=2, timeout_s=30)
        finally:
            late.join()
    retried = (out / "not_ready.log").read_text().splitlines()
    assert retried and all(line.startswith("iter0001 attempt ") for line in retried)
    its = read_iterations(out, 30)
    assert [it["status"] for it in its] == ["ok", "ok"]
    for i in (1, 2):  # what is kept is the attempt that measured
        doc = json.loads((out / f"iter{i:04d}.out").read_text())
        assert "error" not in doc and doc["end"]["sum_received"]["bits_per_second"] > 0


def test_the_host_client_makes_again_an_attempt_the_busy_server_refused(tmp_path):
    """iperf3 serves one test at a time: a client that comes while another test runs gets "the
    server is busy" in its JSON (and exits 0). The loop makes that attempt again, after pauses,
    until the server is free, and keeps the attempt that measured."""
    import json
    import subprocess
    import time

    from interference.core.loop import read_iterations
    from interference.studies.network import host_side

    # The loop's first attempt comes after the ready time: 1 s into the other client's 3-s test.
    ms, port = iperf3_client(tmp_path, ready_after_s=1.0)
    ms.server["not_ready"] = ["Connection refused", "the server is busy"]
    out = tmp_path / "client"
    with host_side.Processes(tmp_path, time.time() + 60) as host:
        host.start_server(["iperf3", "--server", "--port", str(port)], "server")
        time.sleep(0.3)
        other = subprocess.Popen(
            ["iperf3", "--client", "127.0.0.1", "--port", str(port), "--time", "3"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            host.client_loop(ms, {"SERVER_HOST": "127.0.0.1"}, out, iterations=1, timeout_s=30)
        finally:
            other.wait()
    retried = (out / "not_ready.log").read_text().splitlines()
    assert retried and all("the server is busy" in line for line in retried)
    [it] = read_iterations(out, 30)
    assert it["status"] == "ok"
    doc = json.loads((out / "iter0001.out").read_text())
    assert "error" not in doc and doc["end"]["sum_received"]["bits_per_second"] > 0


def test_an_attempt_refused_after_every_retry_is_a_failed_iteration(tmp_path, monkeypatch):
    """iperf3 --json may exit 0 when nothing listens (3.12 does): after the retries, the
    iteration is recorded as failed (so the run's n_failed counts it), not as one that measured."""
    import time

    from interference.core.loop import read_iterations
    from interference.studies.network import host_side

    monkeypatch.setattr(host_side, "NOT_READY_RETRIES", 1)
    ms, _ = iperf3_client(tmp_path, ready_after_s=0.05)  # nothing will listen on its port
    out = tmp_path / "client"
    with host_side.Processes(tmp_path, time.time() + 60) as host:
        host.client_loop(ms, {"SERVER_HOST": "127.0.0.1"}, out, iterations=1, timeout_s=30)
    assert len((out / "not_ready.log").read_text().splitlines()) == 2  # both attempts refused
    [it] = read_iterations(out, 30)
    # iperf3 3.12 exits 0 (NOT_LISTENING_RC recorded); later versions exit 1 themselves.
    assert it["status"] != "ok" and it["exit_code"] != 0


def test_the_reference_row_has_no_interval_and_no_finding_is_judged_on_itself(tmp_path):
    """Where bare metal's host-to-host row did not run, Docker's host mode is the reference: its
    row is 1 without an interval, and 001-8 (Docker's host mode over bare metal) is not run
    rather than Docker over itself."""
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write

    table = samples([("docker", "to-host", "host", "throughput", [100, 101, 99, 100, 102, 98]),
                     ("docker", "to-host", "bridge", "throughput", [80, 81, 79, 80, 82, 78])])  # fmt: skip
    table["repetition"] = (table["iteration"] - 1) // 2 + 1
    path = tmp_path / "samples.tsv"
    table.to_csv(path, sep="\t", index=False)
    rel = relative({"samples": path}, 1).set_index("mode")
    assert (
        rel.loc["host", "ratio"] == 1
        and pd.isna(rel.loc["host", "ci_low"])
        and rel.loc["host", "note"] == "the reference"
    )
    assert (
        rel.loc["bridge", "ci_level"] == "runs"
        and rel.loc["bridge", "ci_low"] < 0.8 < rel.loc["bridge", "ci_high"]
    )
    write(rel.reset_index(), tmp_path / "network/relative.tsv")
    (tmp_path / "environment.json").write_text("{}")
    published = REPO / "report/published"
    entry = [e for e in sc.load_catalogue(published / "findings.yaml") if e["id"] == "001-8"]
    card = sc.scorecard(entry, tmp_path, ["network"], published)
    assert card["verdict"].tolist() == ["not run in this config"], card.to_dict("records")
    assert "is the reference" in card["reason"].iloc[0]
