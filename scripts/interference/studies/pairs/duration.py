"""The pair study's model of how long one run takes (the time estimate where this host has no
history of the same run): each member's iteration time from its microservice's declared
expected_iteration_s at the run's sizes, plus the costs the runner adds. Constants measured on
the 2-core machine this was developed on (Docker 20.10); a run's own history replaces them."""

from __future__ import annotations

from interference.core.loop import START_MARGIN_S
from interference.core.microservices import registry
from interference.studies.pairs import cases

RUN_SETUP_S = 0.5  # the raw folder, the runtime's description, telemetry, removal at the end
CONTAINER_PER_ITERATION_S = 0.3  # Case 1: a fresh container per iteration (start, stop, remove)
START_FILE_S = START_MARGIN_S  # concurrent members start together: the start file after the last is up
SERVER_S = 0.3  # a network benchmark's server container started (then its readiness is awaited once)


def run_seconds(settings: dict) -> float | None:
    """Expected wall time of the run with these settings; None when a member declares no model."""
    ms = registry()
    members = cases.members_of(settings["pair"])
    times = [ms[m].iteration_seconds(settings["sizes"].get(m, {})) for m in members]
    if any(t is None for t in times):
        return None
    waits = [ms[m].server.get("ready_after_s", 1.0) for m in members if ms[m].server]
    servers = SERVER_S * len(waits) + max(waits, default=0.0)
    if settings["case"] in cases.ALONE_CASES:
        # With a CI target the run may go on to max_iterations; the minimum is the estimate.
        return RUN_SETUP_S + servers + settings["iterations"] * (times[0] + CONTAINER_PER_ITERATION_S)
    window = float(settings["window_s"])
    rule = settings.get("adaptive")
    if rule:
        # Held open until the slowest member has its samples inside (about one more iteration
        # than asked: the first may begin before the overlap), at most the cap.
        window = min(float(rule["window_cap_s"]), max(window, (rule["min_overlap_samples"] + 1) * max(times)))
    # The iteration under way when the window closes finishes: half the slowest one on average.
    return RUN_SETUP_S + servers + START_FILE_S + window + max(times) / 2
