"""The pair study's columns of runs.tsv: case, pair, iterations asked for, window and iteration
timeout given, overlap window, and for each member the cgroup limits requested and read back
inside its container, and whether they match."""

from __future__ import annotations

from interference.studies.pairs.records import PairResults

# The limits a run records, as columns of runs.tsv (per member k: member<k>_<key>).
REQUESTED_KEYS = ("cpuset", "cpus", "memory")
READ_BACK_KEYS = ("cpuset", "cpu_quota_us", "cpu_period_us", "memory_max", "nproc", "cgroup_version")


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


def _member_container(meta: dict, k: int) -> dict | None:
    """The container member k (1-based) ran in: its own, or the shared Case 2 container."""
    for c in meta.get("containers", []):
        roles = c.get("role", "").split("+")
        if f"member{k}" in roles:
            return c
    return None


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
    """The pair study's columns of runs.tsv: case, pair, overlap and each member's limits."""
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
    for k in (1, 2):
        member = results.members[k - 1] if len(results.members) >= k else None
        container = _member_container(meta, k) if member else None
        requested = (container or {}).get("limits_requested") or {}
        read_back = member.limits_read_back if member else {}
        its = member.iteration_records if member else ()
        row[f"member{k}"] = member.microservice if member else ""
        # Its workload size (per host, paper 004: smaller on the edge device).
        sizes = s.get("sizes", {}).get(member.microservice) if member else None
        row[f"member{k}_sizes"] = ", ".join(f"{a}={b}" for a, b in sorted(sizes.items())) if sizes else ""
        row[f"member{k}_iterations"] = len(its) if member else None
        row[f"member{k}_failed"] = sum(it.status != "ok" for it in its) if member else None
        row[f"member{k}_container"] = (container or {}).get("role", "")
        for key in REQUESTED_KEYS:
            v = requested.get(key)
            row[f"member{k}_requested_{key}"] = "" if v is None else v
        for key in READ_BACK_KEYS:
            row[f"member{k}_read_{key}"] = read_back.get(key, "")
        row[f"member{k}_limits_match"] = limits_match(requested, read_back) if member else ""
        row[f"member{k}_threads"] = threads(sizes or {}, read_back)
    return row


def threads(sizes: dict, read_back: dict):
    """The threads of a multithreaded microservice (one with a `threads` size: L, S): the
    configured count, or with 0 one per CPU its container may use, as OpenBLAS and OpenMP do by
    default: the nproc read back inside it (its cpuset, not a CPU quota). '' for the others."""
    if "threads" not in sizes:
        return ""
    return sizes["threads"] or read_back.get("nproc", "")
