"""The pingpong study: one run on its runtime (Study.execute)."""

from __future__ import annotations

import contextlib
import time

from interference.core.microservices import registry
from interference.runtimes import ContainerSpec
from interference.runtimes.base import ISOLATED
from interference.studies.pingpong import MICROSERVICE, OVERLAY_OF, fabric, load

PING_PORT, PONG_PORT = 18080, 18081
TEST_MARGIN_S = 30.0


def _service(run, role: str, argv: list[str], netns: str | None) -> ContainerSpec:
    bare = run.settings["runtime"] == "baremetal"
    return ContainerSpec(
        name=run.name(role),
        image=run.images[MICROSERVICE]["id"],
        command=argv,
        labels=run.labels,
        netns=netns if bare else None,
        network_mode=None if bare else ISOLATED,
    )


def execute(run) -> dict:
    s = run.settings
    layer, binary = s["layer"], registry()[MICROSERVICE].extra["binary"]
    tests = [(i, m) for i in range(1, s["iterations"] + 1) for m in s["message_sizes"]]
    test_timeout = 2 * s["duration_s"] + TEST_MARGIN_S
    deadline = time.time() + len(tests) * test_timeout + 2 * TEST_MARGIN_S
    info = {"ab": load.version(), "overlay": None}
    with contextlib.ExitStack() as stack:
        if layer == "loopback":
            ping_at, pong_at, upstream, net = "127.0.0.1", "127.0.0.1", "127.0.0.1", None
        else:
            info["stale_removed"] = fabric.remove_all()  # of a run killed with SIGKILL
            net = stack.enter_context(fabric.Fabric(run.run_id, run.outdir, deadline))
            ping_at, pong_at = net.address("a"), net.address("b")
            upstream = net.overlay_address("b") if layer in OVERLAY_OF else pong_at
        pong = _service(run, "pong", [binary, "pong", str(PONG_PORT)], net and net.ns["b"])
        ping = _service(
            run, "ping", [binary, "ping", str(PING_PORT), upstream, str(PONG_PORT)], net and net.ns["a"]
        )
        pids = {}  # host -> a process in its container's network namespace
        for spec, role, host, port in ((pong, "pong", "b", PONG_PORT), (ping, "ping", "a", PING_PORT)):
            run.start(spec, role)
            if spec.network_mode == ISOLATED:
                pids[host] = run.runtime.netns_pid(spec.name)
                net.attach_container(host, pids[host], port)
        if layer in OVERLAY_OF:
            info["overlay"] = net.vxlan() if OVERLAY_OF[layer] == "vxlan" else net.tinc(layer == "encrypted")
            for host, pid in pids.items():
                net.attach_overlay(host, pid)
        url = f"http://{ping_at}:{PING_PORT}/"
        cpu_urls = {"ping": f"{url}cpu", "pong": f"http://{pong_at}:{PONG_PORT}/cpu"}
        not_ready = load.wait_ready(f"{url}?m=1")
        done = [] if not_ready else _tests(run, tests, url, cpu_urls, test_timeout)
        with open(run.outdir / "containers.log", "a") as f:
            for spec in (pong, ping):
                f.write(f"==== {spec.name} ====\n{run.runtime.logs(spec.name)}\n")
    if not_ready:
        run.events.append(not_ready)
    return {
        **info,
        "layer": layer,
        "ping_url": url,
        "not_ready": not_ready,
        "tests": done,
        "n_iterations": len(done),
        "n_failed": len(tests) - sum(t["rc"] == 0 for t in done),
    }


def _tests(run, tests, url: str, cpu_urls: dict, timeout_s: float) -> list[dict]:
    s, out = run.settings, run.outdir / "tests"
    out.mkdir()
    done = []
    for i, m in tests:
        before = {k: load.cpu_seconds(u) for k, u in cpu_urls.items()}
        stem = f"i{i:04d}-m{m}"
        t = load.ab(f"{url}?m={m}", s["duration_s"], s["concurrency"], out / stem, timeout_s)
        after = {k: load.cpu_seconds(u) for k, u in cpu_urls.items()}
        for k in cpu_urls:
            t[f"{k}_cpu_s"] = None if None in (before[k], after[k]) else after[k] - before[k]
        done.append({"iteration": i, "message_bytes": m, "stdout": f"tests/{stem}.out", **t})
    return done
