"""The pair study's run facts: its columns of runs.tsv (case, pair, iterations asked for, window
and iteration timeout given, overlap window, the stopping rule's decision) and its rows of
run_members.tsv, one per member (workload sizes, iterations, the cgroup limits requested and read
back inside its container, whether they match, threads, its network server's cores; columns in
schemas.RUN_MEMBERS)."""

from __future__ import annotations

from interference.studies.pairs.records import PairMember, PairResults
from interference.studies.pairs.schemas import READ_BACK, REQUESTED, REQUESTED_KEYS


def memory_bytes(text) -> int | None:
    """Docker's memory notation (512m, 2g, 1073741824) in bytes; None when not a limit."""
    if text is None or text == "":
        return None
    s = str(text).strip().lower()
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    if s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    try:
        return int(float(s))
    except ValueError:
        return None


def _member_container(meta: dict, member: PairMember) -> dict | None:
    """The container the member ran in: its own, or the shared Case 2 container."""
    for c in meta.get("containers", []):
        if member.role in c.get("role", "").split("+"):
            return c
    return None


def _server_cores(meta: dict, member: PairMember) -> str:
    """The cores the member's network server was given, 'any' when it was not pinned; empty
    when the member had no server."""
    for c in meta.get("containers", []):
        if c.get("role") == f"server for {member.role}":
            return _text((c.get("limits_requested") or {}).get("cpuset")) or "any"
    return ""


def limits_match(requested: dict, read_back: dict) -> str:
    """'yes' when every requested limit is what the container read back, else what differs;
    'unlimited' when nothing was requested (the container shares the host)."""
    diffs = []
    if requested.get("cpuset") and read_back.get("cpuset") not in (None, requested["cpuset"]):
        diffs.append(f"cpuset {requested['cpuset']} read {read_back.get('cpuset')}")
    want_mem = memory_bytes(requested.get("memory"))
    got_mem = memory_bytes(read_back.get("memory_max"))
    if want_mem is not None and got_mem != want_mem:
        diffs.append(f"memory {requested['memory']} read {read_back.get('memory_max')}")
    if requested.get("cpus") not in (None, ""):
        quota, period = read_back.get("cpu_quota_us"), read_back.get("cpu_period_us")
        try:
            got = float(quota) / float(period)
        except (TypeError, ValueError, ZeroDivisionError):
            got = None
        if got is None or abs(got - float(requested["cpus"])) > 1e-6:
            diffs.append(f"cpus {requested['cpus']} read quota {quota}/{period}")
    if not any(requested.get(k) not in (None, "") for k in REQUESTED_KEYS):
        return "unlimited"
    return "yes" if not diffs else "; ".join(diffs)


def run_row(meta: dict) -> dict:
    """The pair study's columns of runs.tsv: case, pair, window, overlap and stopping."""
    s = meta["settings"]
    results = PairResults.from_json(meta)
    overlap = results.overlap
    start, end = (overlap.start, overlap.end) if overlap else (None, None)
    row = {
        "case": str(s["case"]),
        "pair": s["pair"],
        "iterations_requested": s.get("iterations"),
        "window_s": s.get("window_s"),
        # The timeout the run was given (its settings), so the report states it from the runs.
        "iteration_timeout_s": s.get("iteration_timeout_s"),
        "n_in_overlap": sum(it.in_overlap for it in results.iteration_records),
        "overlap_start": start,
        "overlap_end": end,
        "overlap_s": (end - start) if start is not None and end is not None else None,
    }
    # An adaptive stopping rule's decision (config adaptive): empty with fixed counts.
    stop = results.stopping or {}
    half = [v for v in (stop.get("ci_half_width") or {}).values() if v is not None]
    row.update(
        stopping_rule=stop.get("rule", ""),
        stopped_by=stop.get("stopped_by", ""),
        ci_half_width_max=max(half) if half else None,
        window_final_s=stop.get("window_s"),
        window_extended_s=stop.get("extended_s"),
    )
    return row


def member_rows(meta: dict) -> list[dict]:
    """The run's rows of run_members.tsv, one per member in order (the run-facts step puts the
    run's identity before them). Text as recorded: a limit requested as 1.5 CPUs is '1.5'."""
    sizes_of = meta["settings"].get("sizes", {})
    rows = []
    for member in PairResults.from_json(meta).members:
        container = _member_container(meta, member) or {}
        requested = container.get("limits_requested") or {}
        read_back = member.limits_read_back
        its = member.iteration_records
        # Its workload size (per host, paper 004: smaller on the edge device).
        sizes = sizes_of.get(member.microservice) or {}
        rows.append(
            {
                "member": member.member,
                "role": member.role,
                "microservice": member.microservice,
                "sizes": ", ".join(f"{a}={b}" for a, b in sorted(sizes.items())),
                "iterations": len(its),
                "failed": sum(it.status != "ok" for it in its),
                "container": container.get("role", ""),
                **{column: _text(requested.get(key)) for key, column in REQUESTED.items()},
                **{column: _text(read_back.get(key)) for key, column in READ_BACK.items()},
                "limits_match": limits_match(requested, read_back),
                "threads": threads(sizes, read_back),
                "server_cpuset": _server_cores(meta, member),
            }
        )
    return rows


def _text(value) -> str:
    return "" if value is None else str(value)


def threads(sizes: dict, read_back: dict) -> int | None:
    """The threads of a multithreaded microservice (one with a `threads` size: L, S): the
    configured count, or with 0 one per CPU its container may use, as OpenBLAS and OpenMP do by
    default: the nproc read back inside it (its cpuset, not a CPU quota). None for the others,
    and where the container read back no nproc."""
    if "threads" not in sizes:
        return None
    count = sizes["threads"] or read_back.get("nproc", "")
    return int(count) if str(count).strip().isdigit() else None
