"""Pi (Y-Cruncher stand-in) output: key=value lines from containers/pi/run; every digit
asked for must have been written and the first 50 decimals must check."""

import math

from interference.parsers import ParseError


def parse(stdout: str, stderr: str) -> dict[str, float]:
    if not stdout.strip():
        raise ParseError("empty output")
    kv = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    if not kv:
        raise ParseError("garbled output")
    if kv.get("check") == "FAILED":
        raise ParseError("pi digits check failed")
    if kv.get("check") != "PASSED" or not {"computation_s", "total_s", "digits_written"} <= kv.keys():
        raise ParseError("truncated output")
    try:
        computation, total = float(kv["computation_s"]), float(kv["total_s"])
        written, requested = int(kv["digits_written"]), int(kv["digits_requested"])
    except (KeyError, ValueError):
        raise ParseError("garbled output") from None
    if written != requested:
        raise ParseError(f"pi wrote {written} of {requested} digits")
    if not (math.isfinite(total) and 0 < computation <= total):
        raise ParseError("garbled output")
    return {"computation_time": computation, "total_time": total}
