"""The load generator's side of a ping-pong run, in this machine's own namespace (the paper's
"siege host"): ApacheBench from Debian's apache2-utils against ping, and the services' CPU
time read before and after each test (GET /cpu) to show how much of a core each used."""

from __future__ import annotations

import resource
import subprocess
import time
import urllib.request
from pathlib import Path

READY_TIMEOUT_S = 30.0
AB_REQUEST_TIMEOUT_S = 10  # ab -s: one request's limit


def version() -> str:
    r = subprocess.run(["ab", "-V"], capture_output=True, text=True, check=False)
    return r.stdout.splitlines()[0] if r.stdout else "ab (version unknown)"


def get(url: str, timeout: float = 5) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def wait_ready(url: str, timeout_s: float = READY_TIMEOUT_S) -> str | None:
    """Poll the whole chain (ping asks pong) until it answers; None, or the last error."""
    deadline = time.time() + timeout_s
    while True:
        try:
            get(url, timeout=2)
            return None
        except OSError as e:
            if time.time() > deadline:
                return f"{url} did not answer within {timeout_s:g} s: {e}"
            time.sleep(0.2)


def cpu_seconds(url: str) -> float | None:
    try:
        return float(get(url))
    except (OSError, ValueError):
        return None


def ab(url: str, duration_s: int, concurrency: int, out: Path, timeout_s: float) -> dict:
    """One ApacheBench test of `duration_s` seconds (keep-alive, `concurrency` requests in
    flight); stdout and stderr into out.out/.err; its exit code, times and CPU seconds."""
    argv = ["ab", "-q", "-k", "-c", str(concurrency), "-t", str(duration_s), "-n", "100000000"]
    argv += ["-s", str(AB_REQUEST_TIMEOUT_S), url]  # -n after -t: ab's 50000-request cap lifted
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    with open(out.with_suffix(".out"), "w") as o, open(out.with_suffix(".err"), "w") as e:
        rc = subprocess.run(
            ["timeout", "--kill-after=5", f"{timeout_s:g}", *argv], stdout=o, stderr=e, check=False
        ).returncode
    end = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"argv": argv, "rc": rc, "start": start, "end": end, "ab_cpu_s": cpu}
