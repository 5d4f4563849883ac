"""The profiling study's runs as pure functions of its config: what each run key means, every run,
the images each uses, and the model of a run's wall time.

  1/L/alone, 1u/L/alone   a microservice alone, limited (Case 1) or unlimited (Case 1u)
  2/L/cpu-0.5             L beside a cpu bubble of 0.5 cores, both in one container (placement 2)
  3a/L/disk-50            L beside a 50 MB/s disk bubble in a container of its own (placement 3a)
  3b/L/memory-64          L beside a 64 MB memory bubble, each in its own container limited to its
                          own cores (placement 3b, the pair study's Case 3b; no cpu bubble there)
  1/Q/memory              the probe alone and limited, measuring memory (its baseline in 3b)
  1u/Q/cpu                the probe alone, measuring cpu (its baseline)
  3a/Q/cpu-2              the probe beside a bubble of 2 cores (its own sensitivity curve)
  2/Q/memory+S            the probe measuring memory beside S (S's pressure)
  1q/L/quota-0.5          L alone under a CPU quota of 0.5 cores, every core allowed (its speed
                          at a CPU share: cpu_shares.py)
  1k/L/busy-2             L unlimited beside 2 busy containers, each spinning one core (its speed
                          at the share the scheduler gives it among busy neighbours)"""

from __future__ import annotations

import os
from dataclasses import dataclass

from interference.core.loop import START_MARGIN_S
from interference.core.microservices import registry

BUBBLE, PROBE = "X", "Q"
RESOURCES = ("cpu", "memory", "disk", "network")
PLACEMENTS = ("2", "3a", "3b")
DEFAULT_PLACEMENTS = ("2", "3a")
# Placement 3b limits each container as the pair study's Case 3b (disjoint cores, memory): its
# baseline is the member alone and limited (Case 1), and a cpu bubble on other cores is no bubble.
LIMITED_PLACEMENTS = ("3b",)
ALONE_CASES = ("1", "1u")
# A microservice alone, unlimited but for a CFS quota of some cores: every core stays allowed,
# so it starts as many threads as in an unlimited pair (one per core for L and S) and the quota
# gives it the share of CPU time a partner would leave it.
QUOTA_CASE = "1q"
QUOTA = "quota"
# A microservice unlimited beside k containers each spinning one core: its share is what the
# scheduler's rules give it (cpu_shares.water_fill), reached by time-slicing against busy threads,
# not by a quota. A barrier-synchronised program (OpenMP's STREAM, OpenBLAS's Linpack) loses far
# more there than under a quota of the same share (benchmarks/bench_barrier.py).
BUSY_CASE = "1k"
BUSY = "busy"
SWEEP_CASES = (QUOTA_CASE, BUSY_CASE)
ALONE = "alone"
# The probe's sizes that change a run on each resource (the others do not enter its settings).
PROBE_SIZES = {
    "cpu": ("cpu_ops",),
    "memory": ("memory_mb", "memory_ops"),
    "disk": ("disk_mb",),
    "network": ("network_mb",),
}
# The bubble runs one iteration over the whole window and this much past its end, so that it
# presses on every iteration of the target that ends inside the window.
BUBBLE_MARGIN_S = 1
# Costs the runner adds, as the pair study measured them (studies/pairs/duration.py, 2 cores,
# Docker 20.10): the run's own set-up and removal, a fresh container per alone iteration, the
# start file half a second after the last container is up, a network microservice's server.
RUN_SETUP_S = 0.5
CONTAINER_PER_ITERATION_S = 0.3
START_FILE_S = START_MARGIN_S
SERVER_S = 0.3
BUBBLE_START_S = 0.2  # stress-ng, fio or iperf3 starting (iteration-times.yaml's X)


def baseline_case(placement: str) -> str:
    """The alone case a placement's degradations are against: limited for a limited placement."""
    return "1" if placement in LIMITED_PLACEMENTS else "1u"


def resources_in(placement: str, resources) -> list[str]:
    """The resources a placement's bubbles press on (disjoint cores: no cpu in 3b)."""
    return [r for r in resources if not (placement in LIMITED_PLACEMENTS and r == "cpu")]


def intensity_text(x: float) -> str:
    return f"{float(x):g}"


@dataclass(frozen=True)
class ProfilingRun:
    """One run: the case ("1", "1u", or a placement "2"/"3a"/"3b"), the measured microservice (or the
    probe Q), and what is beside it: nothing, a bubble (resource, intensity) or, for the probe, a
    microservice (resource, partner)."""

    case: str
    target: str
    resource: str | None = None
    intensity: float | None = None
    partner: str | None = None
    quota: float | None = None
    busy: int | None = None

    @property
    def alone(self) -> bool:
        return self.case in ALONE_CASES or self.case in SWEEP_CASES

    @property
    def beside_bubble(self) -> bool:
        return self.intensity is not None

    def key_fields(self) -> dict:
        if self.quota is not None:
            beside = f"{QUOTA}-{intensity_text(self.quota)}"
        elif self.busy is not None:
            beside = f"{BUSY}-{self.busy}"
        elif self.beside_bubble:
            beside = f"{self.resource}-{intensity_text(self.intensity)}"
        elif self.partner:
            beside = f"{self.resource}+{self.partner}"
        else:
            beside = self.resource or ALONE
        return {"case": self.case, "target": self.target, "beside": beside}

    @classmethod
    def from_key_fields(cls, f: dict) -> ProfilingRun:
        beside = f["beside"]
        if beside == ALONE:
            return cls(f["case"], f["target"])
        if beside.startswith(f"{QUOTA}-"):
            return cls(f["case"], f["target"], quota=float(beside.split("-", 1)[1]))
        if beside.startswith(f"{BUSY}-"):
            return cls(f["case"], f["target"], busy=int(beside.split("-", 1)[1]))
        if "+" in beside:
            resource, partner = beside.split("+")
            return cls(f["case"], f["target"], resource, partner=partner)
        if "-" in beside:
            resource, intensity = beside.split("-")
            return cls(f["case"], f["target"], resource, float(intensity))
        return cls(f["case"], f["target"], beside)


def runs(cfg: dict) -> list[ProfilingRun]:
    """Every run of the config, repetitions aside: the microservices alone (1, 1u), each beside
    each bubble, and the probe alone, beside each bubble and beside each microservice."""
    mss, resources = cfg["microservices"], cfg["resources"]
    out = [ProfilingRun(case, ms) for ms in mss for case in ALONE_CASES]
    out += [ProfilingRun(QUOTA_CASE, ms, quota=float(q)) for ms in mss for q in cfg.get("quotas", [])]
    out += [ProfilingRun(BUSY_CASE, ms, busy=int(k)) for ms in mss for k in cfg.get("busy", [])]
    # The probe alone as each placement's curves and pressures need it (baseline_case), per resource.
    needed = {(baseline_case(p), r) for p in cfg["placements"] for r in resources_in(p, resources)}
    out += [ProfilingRun(case, PROBE, r) for case in ("1u", "1") for r in resources if (case, r) in needed]
    for p in cfg["placements"]:
        for r in resources_in(p, resources):
            for x in cfg["intensities"][r]:
                out += [ProfilingRun(p, ms, r, float(x)) for ms in [*mss, PROBE]]
            out += [ProfilingRun(p, PROBE, r, partner=ms) for ms in mss]
    return out


def containers(run: ProfilingRun) -> list[list[str]]:
    """The microservices of each container of the run (placement 2: one container for both; the
    busy sweep: the member's, then one spinning bubble's each)."""
    if run.busy is not None:
        return [[run.target], *([BUBBLE] for _ in range(run.busy))]
    other = BUBBLE if run.beside_bubble else run.partner
    if other is None:
        return [[run.target]]
    pair = [run.target, other] if run.target != PROBE or other == BUBBLE else [other, run.target]
    return [pair] if run.case == "2" else [[m] for m in pair]


def image_names(run: ProfilingRun) -> list[str]:
    """One image per container (a stack like L+X: the bubble installed on L's image), plus the
    image of a network microservice's server."""
    names = ["+".join(c) for c in containers(run)]
    names += [m for c in containers(run) for m in c if registry()[m].server]
    return sorted(set(names))


def window_s(cfg: dict, ms: str) -> int:
    return cfg["window_s_per_microservice"].get(ms, cfg["window_s"])


def run_seconds(settings: dict) -> float | None:
    """Expected wall time of a run (the estimate's model where this host has no history of it)."""
    ms = registry()
    sizes = settings["sizes"]
    members = [m for m in sizes if m != BUBBLE]
    times = {m: ms[m].iteration_seconds(sizes[m]) for m in members}
    if any(t is None for t in times.values()):
        return None
    waits = [ms[m].server.get("ready_after_s", 1.0) for m in members if ms[m].server]
    servers = SERVER_S * len(waits) + max(waits, default=0.0)
    if settings["case"] in ALONE_CASES or settings["case"] in SWEEP_CASES:
        # Under a quota (or a share among busy neighbours: about the cores over the containers)
        # below one core a one-thread iteration takes 1/share times as long.
        share = settings.get("quota", (os.cpu_count() or 1) / (settings.get("busy", 0) + 1))
        t = times[settings["target"]] / min(1.0, share)
        return RUN_SETUP_S + servers + settings["iterations"] * (t + CONTAINER_PER_ITERATION_S)
    # The window, then the iteration under way at its end (half the slowest on average) or the
    # bubble's margin, whichever is later.
    tail = max(max(times.values()) / 2, BUBBLE_MARGIN_S + BUBBLE_START_S if BUBBLE in sizes else 0)
    return RUN_SETUP_S + servers + START_FILE_S + settings["window_s"] + tail


def fixed_seconds(settings: dict) -> float:
    """The part of a run's time that is wall-clock on any host: the start file's second, the
    window and the bubble's margin past it (the estimate scales only the rest to a host)."""
    if settings["case"] in ALONE_CASES or settings["case"] in SWEEP_CASES:
        return 0.0
    margin = BUBBLE_MARGIN_S if BUBBLE in settings["sizes"] else 0.0
    return START_FILE_S + settings["window_s"] + margin
