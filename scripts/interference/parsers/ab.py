"""ApacheBench (ab) output: its transfer rate (KiB/s received, headers included, as the
paper's trans(m)), requests per second and mean time per request. A run with failed or
non-2xx requests, or none completed, is not a measurement of the exchange."""

import re

from interference.parsers import ParseError

FIELDS = {
    "transfer_rate": r"^Transfer rate:\s+([\d.]+) \[Kbytes/sec\] received",
    "requests": r"^Requests per second:\s+([\d.]+) \[#/sec\] \(mean\)",
    "time_per_request": r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)$",
}


def _count(pattern: str, stdout: str) -> int | None:
    m = re.search(pattern, stdout, re.M)
    return int(m.group(1)) if m else None


def parse(stdout: str, stderr: str) -> dict[str, float]:
    complete = _count(r"^Complete requests:\s+(\d+)", stdout)
    if complete is None:  # ab stopped before its report: its own error is stderr's last line
        if stderr.strip():
            raise ParseError(f"ab error: {stderr.strip().splitlines()[-1]}")
        raise ParseError("truncated output" if stdout.strip() else "empty output")
    if complete == 0:
        raise ParseError("no request completed")
    failed = _count(r"^Failed requests:\s+(\d+)", stdout) or 0
    non2xx = _count(r"^Non-2xx responses:\s+(\d+)", stdout) or 0
    if failed or non2xx:
        raise ParseError(f"{failed} failed and {non2xx} non-2xx of {complete} requests")
    if not re.search(r"^ *100% +\d+ \(longest request\)$", stdout, re.M):
        raise ParseError("truncated output")  # ab's report ends with its percentile table
    values = {}
    for name, pattern in FIELDS.items():
        m = re.search(pattern, stdout, re.M)
        if m is None:
            raise ParseError("truncated output")
        values[name] = float(m.group(1))
    return values
