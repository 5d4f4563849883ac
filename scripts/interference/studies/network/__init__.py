"""Paper 001's Experiments 4 and 5 (its Tables II–V): network throughput and latency between an
entity and the host it runs on — or another host —, for each way of attaching the entity to the
host's network.

One side is a process on the host itself (Debian's iperf3 or sockperf installed on the host,
run by host_side.py), the other the microservice NS (iperf3 stream: throughput) or NR (sockperf
TCP ping-pong: round-trip latency) in an entity of the run's runtime, attached in a network
mode (runtimes/base.py NETWORK_MODES: host network, Linux bridge with NAT, Open vSwitch; a
nested runtime's modes are PARENT+CHILD). Directions: `to-host`, the client in the entity and
the server on the host (the paper's "Container - Host"), and `from-host` (its "Host - Container").
On the `host` runtime both sides are bare-metal processes: the paper's "Host - Host". With
`remote_host` (a Slurm node), direction `to-remote`: the client in the entity on the run's host,
the server a bare-metal process on the remote host, started there as a Slurm job (remote_side.py;
Experiment 5, Tables IV and V: "across two hosts").

  results/raw/<host>/<runtime>/network/<NS|NR>/<direction>/<mode>/rep<r>/client/...  (the loop's files)

Run key <microservice>/<direction>/<mode>; the statistics are in statistics.py, the published
values in published.py, the report section in section.qmd."""

from __future__ import annotations

from pathlib import Path

from interference import runtimes
from interference.core import entity_times
from interference.core.table_schema import INTEGER, NUMBER, TEXT, TableSchema
from interference.host.packages import HostPackage
from interference.runtimes import ovs
from interference.runtimes.base import NETWORK_MODES
from interference.stats.described import DESCRIBED
from interference.studies.base import Compared, KeyFormat, RunKey, Study, StudyConfigError, Table

HERE = Path(__file__).parent
MICROSERVICES = ("NS", "NR")  # iperf3 stream (TCP_STREAM), sockperf ping-pong (TCP_RR)
DIRECTIONS = ("to-host", "from-host", "to-remote")
NESTED_MODES = tuple(f"{p}+{c}" for p in NETWORK_MODES for c in ("host", "bridge"))


def directions_of(cfg: dict) -> list[str]:
    """The directions a config asks for; by default to-remote with a remote host, else the two local."""
    return cfg.get("directions") or (["to-remote"] if cfg.get("remote_host") else ["to-host", "from-host"])


def modes_of(runtime: str) -> frozenset[str]:
    return runtimes.ADAPTERS[runtime].capabilities.network_modes


def is_nested(runtime: str) -> bool:
    return any("+" in m for m in modes_of(runtime))


# The columns of its tables (validated when the statistics step writes them).
SUMMARY = TableSchema(TableSchema(host=TEXT, runtime=TEXT, direction=TEXT, mode=TEXT, metric=TEXT), DESCRIBED)
RELATIVE = TableSchema(
    host=TEXT,
    runtime=TEXT,
    direction=TEXT,
    mode=TEXT,
    metric=TEXT,
    unit=TEXT,
    n=INTEGER,
    mean=NUMBER,
    sd=NUMBER,
    runs=INTEGER,
    run_sd=NUMBER,  # the SD of the run means: a ratio of two rows at the runs level
    reference=TEXT,
    reference_mean=NUMBER,
    ratio=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    ci_method=TEXT,
    ci_level=TEXT,  # runs, or iterations where a side had one run (stats/run_level.py)
    ci_df=NUMBER,
    note=TEXT,
)


class NetworkStudy(Study):
    name = "network"
    title = "Network modes: throughput and latency between an entity and its host (paper 001, Tables II, III)"
    run_key = KeyFormat(
        "{microservice}/{direction}/{mode}",
        microservice=r"N[A-Z]",
        direction=r"(?:to|from)-host|to-remote",
        mode=r"[a-z]+(?:\+[a-z]+)?",
    )
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "microservices": {
                "type": "array",
                "items": {"enum": list(MICROSERVICES)},
                "minItems": 1,
                "uniqueItems": True,
                "default": list(MICROSERVICES),
                "description": "NS: throughput (TCP_STREAM), NR: round-trip latency (TCP_RR)",
            },
            "directions": {
                "type": "array",
                "items": {"enum": list(DIRECTIONS)},
                "minItems": 1,
                "uniqueItems": True,
                "description": "to-host: client in the entity; from-host: server in the entity; "
                "to-remote: client in the entity, server on remote_host (default: to-remote when "
                "remote_host is set, the other two otherwise)",
            },
            "remote_host": {
                "type": ["string", "null"],
                "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                "default": None,
                "description": "the Slurm node whose bare metal serves the to-remote runs (paper 001's "
                "Experiment 5: a server on one host, the client on the other); needs profiles/slurm",
            },
            "modes": {
                "type": "array",
                "items": {"enum": list(NETWORK_MODES)},
                "minItems": 1,
                "uniqueItems": True,
                "default": list(NETWORK_MODES),
                "description": "each runtime runs those it has (a VM has no host network)",
            },
            "nested_modes": {
                "type": "array",
                "items": {"enum": list(NESTED_MODES)},
                "uniqueItems": True,
                "default": list(NESTED_MODES),
                "description": "PARENT+CHILD network modes of nested runtimes (Table III)",
            },
            "duration_s": {
                "type": "integer",
                "minimum": 1,
                "default": 5,
                "description": "one test (paper: netperf -l)",
            },
            "iterations": {
                "type": "integer",
                "minimum": 1,
                "default": 3,
                "description": "tests per run (paper: 5)",
            },
            "repetitions": {"type": "integer", "minimum": 1, "default": 1},
            "iteration_timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 120},
        },
    }
    tables = {
        "summary": Table("statistics:summary", schema=SUMMARY),
        "relative": Table("statistics:relative", schema=RELATIVE),
    }
    report_section = HERE / "section.qmd"
    compared = (Compared("relative", ("runtime", "direction", "mode", "metric", "reference"), "ratio"),)

    def check(self, cfg: dict) -> None:
        cfg["directions"] = directions_of(cfg)
        if ("to-remote" in cfg["directions"]) != bool(cfg["remote_host"]):
            raise StudyConfigError(
                "studies.network: direction to-remote and remote_host go together (the remote host's "
                "bare metal serves the to-remote runs)"
            )
        for rt in cfg["runtimes"]:
            if not modes_of(rt):
                raise StudyConfigError(
                    f"studies.network.runtimes: {rt} has no network modes (it attaches no entity to the "
                    f"host's network in a chosen way); leave it out"
                )
            if not self.runs_on(cfg, rt):
                raise StudyConfigError(
                    f"studies.network: {rt} runs none of the modes {cfg['nested_modes' if is_nested(rt) else 'modes']} "
                    f"(it has {sorted(modes_of(rt))})"
                )

    def modes_wanted(self, cfg: dict) -> set[str]:
        return {
            m
            for rt in cfg["runtimes"]
            for r in self.runs_on(cfg, rt)
            for m in self.run_key.read(r.key)["mode"].split("+")
        }

    def host_packages(self, cfg: dict):
        packages = [
            HostPackage("iperf3", "iperf3", "the host's end of the throughput tests"),
            HostPackage("sockperf", "sockperf", "the host's end of the latency tests"),
        ]
        if "ovs" in self.modes_wanted(cfg):
            packages += ovs.PACKAGES
        return tuple(packages)

    def check_machine(self, cfg: dict) -> None:
        if "ovs" in self.modes_wanted(cfg) and (lack := ovs.missing()):
            raise StudyConfigError(f"studies.network: mode ovs needs {', '.join(lack)} on this machine")

    def runs(self, cfg):
        return sorted(
            {r for rt in cfg["runtimes"] for r in self.runs_on(cfg, rt)}, key=lambda r: (r.key, r.repetition)
        )

    def runs_on(self, cfg, runtime):
        has = modes_of(runtime)
        wanted = directions_of(cfg)
        local = ["to-host"] if {"to-host", "from-host"} & set(wanted) else []
        remote = ["to-remote"] if "to-remote" in wanted else []
        if is_nested(runtime):
            # Children reach the host; the host reaches no child (its bridge is in the parent).
            modes, directions = [m for m in cfg["nested_modes"] if m in has], local + remote
        elif runtime == "baremetal":
            modes, directions = ["host"], local + remote  # host to host: one direction is the other
        else:
            modes, directions = [m for m in cfg["modes"] if m in has], [d for d in DIRECTIONS if d in wanted]
        reps = range(1, cfg["repetitions"] + 1)
        return [
            RunKey(self.run_key.key(microservice=ms, direction=d, mode=m), r)
            for ms in cfg["microservices"]
            for d in directions
            for m in modes
            for r in reps
        ]

    def images(self, cfg):
        return list(cfg["microservices"])

    def run_images(self, cfg, key):
        return [self.run_key.read(key)["microservice"]]

    def settings(self, cfg, key):
        keys = ("duration_s", "iterations", "iteration_timeout_s")
        parts = self.run_key.read(key)
        remote = {"remote_host": cfg["remote_host"]} if parts["direction"] == "to-remote" else {}
        return {**parts, **{k: cfg[k] for k in keys}, **remote}

    def finding_needs(self, check, args):
        """network_ratio: bare metal's host-to-host row (the reference) and the compared
        runtimes' modes, the metric's microservice, the direction."""
        sides = [(args["runtime"], args["mode"])]
        if "over_runtime" in args or "over_mode" in args:
            sides.append((args.get("over_runtime", args["runtime"]), args.get("over_mode", args["mode"])))
        flat = ["host", *[m for rt, m in sides if not is_nested(rt)]]
        out = {
            "runtimes": list(dict.fromkeys(["baremetal", *[rt for rt, _ in sides]])),
            "microservices": ["NS" if args["metric"] == "throughput" else "NR"],
            "modes": list(dict.fromkeys(flat)),
        }
        nested = [m for rt, m in sides if is_nested(rt)]
        if nested:
            out["nested_modes"] = list(dict.fromkeys(nested))
        if "direction" in args:
            out["directions"] = [args["direction"]]
        return out

    def fixed_seconds(self, settings):
        return settings["iterations"] * settings["duration_s"]

    def expected_seconds(self, settings):
        """The entity and the server started and removed, then its tests."""
        extra = entity_times.constants("network")["test_extra_s"].get(settings["microservice"], 0.3)
        start = entity_times.per_runtime("network", "run_s", settings["runtime"])
        return start + settings["iterations"] * (settings["duration_s"] + extra)

    def other_nodes(self, settings: dict) -> list[str]:
        return [settings["remote_host"]] if settings.get("remote_host") else []

    def network_mode(self, settings: dict) -> str | None:
        return settings["mode"]

    # -- one run ---------------------------------------------------------------------------

    def run_row(self, meta):
        s = meta["settings"]
        return {"microservice": s["microservice"], "direction": s["direction"], "mode": s["mode"]}
