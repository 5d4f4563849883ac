"""Paper 003: the HTTP transfer rate trans(m) of a ping-pong system by message size m, across
container, overlay-network and encryption layers.

ApacheBench, in this machine's own namespace, requests ping on host "a"; ping relays each
request to pong on host "b", which answers with m bytes (containers/httppingpong: our C
services). The hosts are network namespaces made for the run (fabric.py). Layers (run key):

  loopback            ping, pong and ab on this machine's loopback: the services' own ceiling
  reference           processes on the two hosts, no containers (the paper's □)
  container           containers of the run's runtime on a bridge with NAT per host (○)
  overlay             the containers also on a kernel VXLAN between the hosts (△, today's Weave)
  overlay-userspace   ... on tinc without encryption: a userspace router (△, 2015's Weave)
  encrypted           ... on tinc with AES-256-CBC and SHA-256 (∇)

The bare-metal runtime (`host`) runs the first two, container runtimes the others. One run per
layer measures every message size, the sizes interleaved within each iteration:

  results/raw/<host>/<runtime>/pingpong/<layer>/rep<r>/tests/i<NNNN>-m<m>.out  (ab's output)

The statistics are in statistics.py, the published values in published.py, the report section
in section.qmd."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pandas as pd

from interference import parsers, runtimes
from interference.host_package import IPROUTE, IPTABLES, HostPackage
from interference.microservices import registry
from interference.runtimes import ContainerSpec
from interference.runtimes.base import ISOLATED
from interference.studies.base import RunKey, Study, StudyConfigError, Table
from interference.studies.pingpong import fabric, findings, load, statistics
from interference.studies.pingpong.statistics import BARE_METAL_LAYERS

MICROSERVICE = "HP"
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # the services refuse more than 64 MiB; the study 8
PING_PORT, PONG_PORT = 18080, 18081
LAYERS = {
    "loopback": "ping, pong and ApacheBench on this machine's loopback (the services' ceiling)",
    "reference": "processes on two hosts, no containers",
    "container": "containers on two hosts (bridge + NAT, published ports)",
    "overlay": "containers on a kernel VXLAN overlay",
    "overlay-userspace": "containers on a userspace overlay (tinc, no encryption)",
    "encrypted": "containers on an encrypted userspace overlay (tinc, AES-256-CBC + SHA-256)",
}
OVERLAY_OF = {"overlay": "vxlan", "overlay-userspace": "tinc", "encrypted": "tinc"}
TEST_MARGIN_S = 30.0


def runs_layers(runtime: str) -> tuple[str, ...]:
    if runtime == "host":
        return BARE_METAL_LAYERS
    if ISOLATED in runtimes.ADAPTERS[runtime].capabilities.network_modes:
        return tuple(layer for layer in LAYERS if layer not in BARE_METAL_LAYERS)
    return ()


class PingPongStudy(Study):
    name = "pingpong"
    title = "HTTP ping-pong by message size across container, overlay and encryption layers (paper 003)"
    key_pattern = "|".join(LAYERS)
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "layers": {
                "type": "array",
                "items": {"enum": list(LAYERS)},
                "minItems": 1,
                "uniqueItems": True,
                "default": list(LAYERS),
                "description": "host runs loopback and reference, container runtimes the others",
            },
            "message_sizes": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": MAX_MESSAGE_BYTES},
                "minItems": 1,
                "uniqueItems": True,
                "default": [10, 100, 1000, 10000, 100000, 1000000],
                "description": f"m, pong's answer in bytes (1 to {MAX_MESSAGE_BYTES})",
            },
            "duration_s": {
                "type": "integer",
                "minimum": 1,
                "default": 3,
                "description": "one ApacheBench test (ab -t)",
            },
            "concurrency": {
                "type": "integer",
                "minimum": 1,
                "maximum": 64,
                "default": 1,
                "description": "requests in flight (ab -c)",
            },
            "iterations": {
                "type": "integer",
                "minimum": 1,
                "default": 3,
                "description": "tests per message size in a run (sizes interleaved)",
            },
            "repetitions": {"type": "integer", "minimum": 1, "default": 1},
        },
    }
    findings = findings.CHECKS
    tables = {
        "summary": Table(statistics.summary),
        "relative": Table(statistics.relative),
        "rsd": Table(statistics.rsd),
    }
    report_section = Path(__file__).parent / "section.qmd"

    def check(self, cfg: dict) -> None:
        for rt in cfg["runtimes"]:
            if not runs_layers(rt):
                raise StudyConfigError(
                    f"studies.pingpong.runtimes: {rt} can run no layer (bare metal runs {list(BARE_METAL_LAYERS)}; "
                    "a container runtime must hand out its entity's network namespace); leave it out"
                )
            if not self.runs_on(cfg, rt):
                raise StudyConfigError(
                    f"studies.pingpong: {rt} runs none of the layers {cfg['layers']} (it runs {list(runs_layers(rt))})"
                )

    def host_packages(self, cfg: dict):
        wanted = {r.key for r in self.runs(cfg)}
        packages = [HostPackage("apache2-utils", "ab", "ApacheBench, the load generator"), IPROUTE, IPTABLES]
        if "tinc" in {OVERLAY_OF.get(k) for k in wanted}:
            packages.append(HostPackage("tinc", "tincd", "the userspace overlay"))
        return tuple(packages)

    def check_machine(self, cfg: dict) -> None:
        wanted = {r.key for r in self.runs(cfg)}
        overlays = {OVERLAY_OF[k] for k in wanted if k in OVERLAY_OF}
        if wanted - {"loopback"} and (lack := fabric.missing(overlays)):
            raise StudyConfigError(
                f"studies.pingpong: layers {sorted(wanted)} need, on this machine, {', '.join(lack)}"
            )

    def runs(self, cfg):
        return sorted(
            {r for rt in cfg["runtimes"] for r in self.runs_on(cfg, rt)}, key=lambda r: (r.key, r.repetition)
        )

    def runs_on(self, cfg, runtime):
        layers = [layer for layer in cfg["layers"] if layer in runs_layers(runtime)]
        return [RunKey(layer, r) for layer in layers for r in range(1, cfg["repetitions"] + 1)]

    def images(self, cfg):
        return [MICROSERVICE]

    def run_images(self, cfg, key):
        return [MICROSERVICE]

    def settings(self, cfg, key):
        keys = ("message_sizes", "duration_s", "concurrency", "iterations")
        return {"layer": key, **{k: cfg[k] for k in keys}}

    def code(self, step):
        here = Path(__file__).parent
        return {
            "statistics": [here / "statistics.py"],
            "findings": [here / "findings.py"],
            "report": [here / "section.qmd", here / "section.py", here / "published.py"],
        }.get(step, [here / "__init__.py"])  # parse(): a change of the hosts or the load reruns no parsing

    # -- one run ---------------------------------------------------------------------------
    def _service(self, run, role: str, argv: list[str], netns: str | None) -> ContainerSpec:
        bare = run.settings["runtime"] == "host"
        return ContainerSpec(
            name=run.name(role),
            image=run.images[MICROSERVICE]["id"],
            command=argv,
            labels=run.labels,
            netns=netns if bare else None,
            network_mode=None if bare else ISOLATED,
        )

    def execute(self, run) -> dict:
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
            pong = self._service(run, "pong", [binary, "pong", str(PONG_PORT)], net and net.ns["b"])
            ping = self._service(
                run, "ping", [binary, "ping", str(PING_PORT), upstream, str(PONG_PORT)], net and net.ns["a"]
            )
            pids = {}  # host -> a process in its container's network namespace
            for spec, role, host, port in ((pong, "pong", "b", PONG_PORT), (ping, "ping", "a", PING_PORT)):
                run.start(spec, role)
                if spec.network_mode == ISOLATED:
                    pids[host] = run.runtime.netns_pid(spec.name)
                    net.attach_container(host, pids[host], port)
            if layer in OVERLAY_OF:
                info["overlay"] = (
                    net.vxlan() if OVERLAY_OF[layer] == "vxlan" else net.tinc(layer == "encrypted")
                )
                for host, pid in pids.items():
                    net.attach_overlay(host, pid)
            url = f"http://{ping_at}:{PING_PORT}/"
            cpu_urls = {"ping": f"{url}cpu", "pong": f"http://{pong_at}:{PONG_PORT}/cpu"}
            not_ready = load.wait_ready(f"{url}?m=1")
            done = [] if not_ready else self._tests(run, tests, url, cpu_urls, test_timeout)
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

    def _tests(self, run, tests, url: str, cpu_urls: dict, timeout_s: float) -> list[dict]:
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

    def parse(self, meta, raw_dir) -> pd.DataFrame:
        s = meta["settings"]
        ms = registry()[MICROSERVICE]
        parse = parsers.get(ms.parser)
        units = {m.name: (m.unit, m.higher_is_better) for m in ms.metrics}
        units |= {f"{k}_cpu": ("cores", False) for k in ("ping", "pong", "ab")}
        by_test = {(t["iteration"], t["message_bytes"]): t for t in meta["tests"]}
        rows = []
        for i in range(1, s["iterations"] + 1):
            for m in s["message_sizes"]:
                t = by_test.get((i, m))
                values, status = {}, meta.get("not_ready") or "not run"
                if t is not None:
                    status = "ok" if t["rc"] == 0 else f"ab exit {t['rc']}"
                    try:
                        out = (raw_dir / t["stdout"]).read_text(errors="replace")
                        err = (raw_dir / t["stdout"]).with_suffix(".err").read_text(errors="replace")
                        values = parse(out, err)
                    except (parsers.ParseError, OSError) as e:
                        status = str(e) if isinstance(e, parsers.ParseError) else "missing output"
                    seconds = t["end"] - t["start"]
                    for k in ("ping", "pong", "ab"):
                        if t.get(f"{k}_cpu_s") is not None and seconds > 0:
                            values[f"{k}_cpu"] = t[f"{k}_cpu_s"] / seconds
                for metric, (unit, higher) in units.items():
                    ok = status == "ok" and metric in values
                    rows.append(
                        {
                            "host": s["host"], "runtime": s["runtime"], "layer": s["layer"],
                            "message_bytes": m, "repetition": s["repetition"], "iteration": i,
                            "metric": metric, "value": values.get(metric) if ok else None,
                            "unit": unit, "higher_is_better": higher,
                            "start": t["start"] if t else None, "end": t["end"] if t else None,
                            "status": "ok" if ok else status if status != "ok" else f"no {metric}",
                        }
                    )  # fmt: skip
        return pd.DataFrame(rows, columns=statistics.SAMPLE_COLUMNS)

    def run_row(self, meta):
        return {"layer": meta["settings"]["layer"]}
