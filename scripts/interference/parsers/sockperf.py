"""sockperf ping-pong output (TCP request/response stand-in for Netperf TCP_RR), run with
--full-rtt. From the statistics of the valid duration (after sockperf's warm-up):

  sockperf: [Valid Duration] RunTime=1.550 sec; SentMessages=20713; ReceivedMessages=20713
  sockperf: ====> avg-rtt=74.821 (std-dev=41.606)

transactions = answered messages per second of the valid duration (one in flight, so a
message and its answer are one transaction), latency = mean round trip in µs. sockperf
exits 0 when it cannot connect: its `ERROR:` line becomes the status. The report is complete
only with its last line, the <MIN> observation of the percentiles."""

import math
import re

from interference.parsers import ParseError

ANSI = re.compile(r"\x1b\[[0-9;]*m")
VALID = re.compile(
    r"\[Valid Duration\] RunTime=(?P<runtime>\S+) sec; SentMessages=(?P<sent>\d+); "
    r"ReceivedMessages=(?P<received>\d+)\s*$"
)
RTT = re.compile(r"====> avg-rtt=(?P<rtt>\S+) \(std-dev=\S+\)\s*$")
END = re.compile(r"---> <MIN> observation = +\S+\s*$")  # the last line of sockperf's report
ERROR = re.compile(r"ERROR: (?P<error>.*\S)")


def parse(stdout: str, stderr: str) -> dict[str, float]:
    text = ANSI.sub("", stdout)
    if not text.strip():
        raise ParseError("empty output")
    error = ERROR.search(text) or ERROR.search(ANSI.sub("", stderr))
    if error:
        raise ParseError(f"sockperf error: {error['error']}")
    valid = rtt = None
    for line in text.splitlines():
        valid = VALID.search(line) or valid
        rtt = RTT.search(line) or rtt
    lines = text.splitlines(keepends=True)
    complete = bool(lines) and END.search(lines[-1]) is not None and lines[-1].endswith("\n")
    if valid is None or rtt is None or not complete:
        if "sockperf" not in text:
            raise ParseError("garbled output")
        raise ParseError("truncated output")
    try:
        runtime, received = float(valid["runtime"]), int(valid["received"])
        latency = float(rtt["rtt"])
    except ValueError:
        raise ParseError("garbled output") from None
    if not (math.isfinite(runtime) and math.isfinite(latency)):
        raise ParseError("garbled output")
    if runtime <= 0 or received == 0 or latency <= 0:
        raise ParseError("sockperf received no answers")
    return {"transactions": received / runtime, "latency": latency}
