"""iperf3 --json output (TCP stream stand-in for Netperf TCP_STREAM): the throughput the
server received over the whole test, in Mbit/s. An `error` key is iperf3's own failure."""

import json
import math

from interference.parsers import ParseError


def parse(stdout: str, stderr: str) -> dict[str, float]:
    if not stdout.strip():
        raise ParseError("empty output")
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        # A cut-off document starts like one; anything else is not iperf3's JSON at all.
        raise ParseError(
            "truncated output" if stdout.lstrip().startswith("{") else "garbled output"
        ) from None
    if not isinstance(doc, dict):
        raise ParseError("garbled output")
    if doc.get("error"):
        raise ParseError(f"iperf3 error: {doc['error']}")
    try:
        received = doc["end"]["sum_received"]
        bits_per_second = float(received["bits_per_second"])
        seconds = float(received["seconds"])
    except (KeyError, TypeError, ValueError):
        raise ParseError("truncated output") from None
    if not (math.isfinite(bits_per_second) and seconds > 0 and bits_per_second >= 0):
        raise ParseError("garbled output")
    return {"throughput": bits_per_second / 1e6}
