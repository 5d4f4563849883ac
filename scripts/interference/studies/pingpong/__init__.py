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

The bare-metal runtime (`baremetal`) runs the first two, container runtimes the others. One run per
layer measures every message size, the sizes interleaved within each iteration:

  results/raw/<host>/<runtime>/pingpong/<layer>/rep<r>/tests/i<NNNN>-m<m>.out  (ab's output)

The statistics are in statistics.py, the published values in published.py, the report section
in section.qmd."""

from __future__ import annotations

from pathlib import Path

from interference import runtimes
from interference.core import entity_times
from interference.core.table_schema import INTEGER, NUMBER, TEXT, TableSchema
from interference.host.packages import IPROUTE, IPTABLES, HostPackage
from interference.runtimes.base import ISOLATED
from interference.stats.described import DESCRIBED
from interference.studies.base import Compared, KeyFormat, RunKey, Study, StudyConfigError, Table
from interference.studies.pingpong import fabric

MICROSERVICE = "HP"
# Layers bare metal runs: the loopback and the reference without any network stack between.
BARE_METAL_LAYERS = ("loopback", "reference")
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # the services refuse more than 64 MiB; the study 8
LAYERS = {
    "loopback": "ping, pong and ApacheBench on this machine's loopback (the services' ceiling)",
    "reference": "processes on two hosts, no containers",
    "container": "containers on two hosts (bridge + NAT, published ports)",
    "overlay": "containers on a kernel VXLAN overlay",
    "overlay-userspace": "containers on a userspace overlay (tinc, no encryption)",
    "encrypted": "containers on an encrypted userspace overlay (tinc, AES-256-CBC + SHA-256)",
}
OVERLAY_OF = {"overlay": "vxlan", "overlay-userspace": "tinc", "encrypted": "tinc"}


def runs_layers(runtime: str) -> tuple[str, ...]:
    if runtime == "baremetal":
        return BARE_METAL_LAYERS
    if ISOLATED in runtimes.ADAPTERS[runtime].capabilities.network_modes:
        return tuple(layer for layer in LAYERS if layer not in BARE_METAL_LAYERS)
    return ()


# The columns of its tables (validated when the statistics step writes them); message_bytes
# stays the text of the run key.
SUMMARY = TableSchema(
    TableSchema(host=TEXT, runtime=TEXT, layer=TEXT, message_bytes=TEXT, metric=TEXT), DESCRIBED
)
RELATIVE = TableSchema(
    host=TEXT,
    runtime=TEXT,
    layer=TEXT,
    baseline_runtime=TEXT,
    baseline=TEXT,
    figure=TEXT,
    message_bytes=TEXT,
    n=INTEGER,
    runs=INTEGER,
    baseline_runs=INTEGER,
    mean=NUMBER,
    baseline_mean=NUMBER,
    ratio=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    ci_method=TEXT,
    ci_level=TEXT,  # runs, or iterations where a side had one run (stats/run_level.py)
    ci_df=NUMBER,
    note=TEXT,
)
RSD = TableSchema(
    host=TEXT,
    runtime=TEXT,
    layer=TEXT,
    sizes=INTEGER,
    min_rsd=NUMBER,
    avg_rsd=NUMBER,
    max_rsd=NUMBER,
    data_gb=NUMBER,
)


class PingPongStudy(Study):
    name = "pingpong"
    title = "HTTP ping-pong by message size across container, overlay and encryption layers (paper 003)"
    run_key = KeyFormat("{layer}", layer="|".join(LAYERS))
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
                "description": "baremetal runs loopback and reference, container runtimes the others",
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
    tables = {
        "summary": Table("statistics:summary", schema=SUMMARY),
        "relative": Table("statistics:relative", schema=RELATIVE),
        "rsd": Table("statistics:rsd", schema=RSD),
    }
    report_section = Path(__file__).parent / "section.qmd"
    compared = (
        Compared("relative", ("runtime", "layer", "baseline_runtime", "baseline", "message_bytes"), "ratio"),
    )

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
        return [
            RunKey(self.run_key.key(layer=layer), r)
            for layer in layers
            for r in range(1, cfg["repetitions"] + 1)
        ]

    def images(self, cfg):
        return [MICROSERVICE]

    def run_images(self, cfg, key):
        return [MICROSERVICE]

    def settings(self, cfg, key):
        keys = ("message_sizes", "duration_s", "concurrency", "iterations")
        return {**self.run_key.read(key), **{k: cfg[k] for k in keys}}

    # -- one run ---------------------------------------------------------------------------

    def run_row(self, meta):
        return {"layer": meta["settings"]["layer"]}

    def finding_needs(self, check, args):
        """pingpong_ratio: the layer and the one it is over, on the runtimes that run them
        (bare metal its two, Docker the containers', as paper 003)."""
        layers = list(dict.fromkeys([args["baseline"], args["layer"]]))
        return {
            "layers": layers,
            "runtimes": [rt for rt in ("baremetal", "docker") if set(layers) & set(runs_layers(rt))],
        }

    def fixed_seconds(self, settings):
        return len(settings["message_sizes"]) * settings["iterations"] * settings["duration_s"]

    def expected_seconds(self, settings):
        """The layer set up and removed, then every size's tests."""
        c = entity_times.constants("pingpong")
        tests = len(settings["message_sizes"]) * settings["iterations"]
        return entity_times.per_runtime("pingpong", "run_s", settings["runtime"]) + tests * (
            settings["duration_s"] + c["test_extra_s"]
        )
