"""The bubble's (X) and the reference probe's (Q) output: a line "resource=<r>", then the report
of the tool that ran, machine-readable: stress-ng's YAML (cpu: the `cpu` stressor, memory: the
`vm` stressor; bogo-ops per second of real time), fio's JSON (disk: MB/s written) or iperf3's JSON
(network: Gbit/s received). One metric, `<resource>_rate`, the rate of the run's resource."""

import json
import math

import yaml

from interference.parsers import ParseError

STRESSOR = {"cpu": "cpu", "memory": "vm"}
RESOURCES = ("cpu", "memory", "disk", "network")


def parse(stdout: str, stderr: str) -> dict[str, float]:
    if not stdout.strip():
        raise ParseError("empty output")
    header, _, report = stdout.partition("\n")
    resource = header.strip().removeprefix("resource=")
    if not header.startswith("resource=") or resource not in RESOURCES:
        raise ParseError("garbled output")
    if not report.strip():
        raise ParseError("truncated output")
    if resource in STRESSOR:
        rate = _stress_ng(report, STRESSOR[resource])
    elif resource == "disk":
        rate = _fio(report)
    else:
        rate = _iperf3(report)
    if not (math.isfinite(rate) and rate > 0):
        raise ParseError(f"no {resource} rate measured")
    return {f"{resource}_rate": rate}


def _stress_ng(report: str, stressor: str) -> float:
    # YAML parses any prefix cut at a line end: only a document closed by "..." is whole.
    if "..." not in (line.rstrip() for line in report.splitlines()):
        raise ParseError("truncated output")
    try:
        doc = yaml.safe_load(report)
        entries = [m for m in doc["metrics"] if m.get("stressor") == stressor]
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        raise ParseError("garbled output") from None
    if not entries:
        raise ParseError(f"no stress-ng {stressor} stressor in output")
    try:
        return float(entries[0]["bogo-ops-per-second-real-time"])
    except (KeyError, TypeError, ValueError):
        raise ParseError("garbled output") from None


def _json(report: str) -> dict:
    # fio may print warnings before its document.
    start = report.find("{")
    try:
        doc = json.loads(report[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        raise ParseError("truncated output") from None
    if not isinstance(doc, dict):
        raise ParseError("garbled output")
    return doc


def _fio(report: str) -> float:
    doc = _json(report)
    try:
        job = doc["jobs"][0]
        error, bytes_per_s = int(job["error"]), float(job["write"]["bw_bytes"])
    except (KeyError, IndexError, TypeError, ValueError):
        raise ParseError("garbled output") from None
    if error:
        raise ParseError(f"fio error {error}")
    return bytes_per_s / 1e6


def _iperf3(report: str) -> float:
    doc = _json(report)
    if doc.get("error"):
        raise ParseError(f"iperf3 error: {doc['error']}")
    try:
        return float(doc["end"]["sum_received"]["bits_per_second"]) / 1e9
    except (KeyError, TypeError, ValueError):
        raise ParseError("truncated output") from None
