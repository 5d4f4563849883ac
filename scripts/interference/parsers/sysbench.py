"""Sysbench CPU output (containers/sysbench/run): the threads' execution time, once every
requested event has run."""

import re

from interference.parsers import ParseError

EXECUTION = re.compile(r"execution time \(avg/stddev\):\s+([0-9.]+)/[0-9.]+\n")  # the whole line
EVENTS = re.compile(r"total number of events:\s+(\d+)")
LIMIT = re.compile(r"Prime numbers limit:\s+(\d+)")


def parse(stdout: str, stderr: str) -> dict[str, float]:
    if not stdout.strip():
        raise ParseError("empty output")
    execution, events = EXECUTION.search(stdout), EVENTS.search(stdout)
    if not (execution and events and LIMIT.search(stdout)):
        raise ParseError("truncated output")
    seconds = float(execution.group(1))
    if int(events.group(1)) == 0 or seconds <= 0:
        raise ParseError("no event ran")
    return {"execution_time": seconds}
