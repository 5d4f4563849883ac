"""Linpack output: key=value lines; the residual check must say PASSED."""

from interference.parsers import ParseError


def parse(stdout: str, stderr: str) -> dict[str, float]:
    kv = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    if not kv:
        raise ParseError("empty output")
    if kv.get("check") == "FAILED":
        raise ParseError("residual check failed")
    if kv.get("check") != "PASSED" or "gflops" not in kv:
        raise ParseError("truncated output")
    try:
        return {"gflops": float(kv["gflops"])}
    except ValueError:
        raise ParseError("garbled output") from None
