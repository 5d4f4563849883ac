"""Collect what the report says about the runs: one row per run, and the environment.

  results/stats/runs.tsv          one row per (host, runtime, case, pair, repetition): when it
                                  ran, iterations and failures, the cgroup limits requested and
                                  read back in each member, the overlap window, events
  results/stats/environment.json  host (CPU model, cores, memory, kernel), engine (version,
                                  cgroup version and driver), images (refs, ids, tool versions),
                                  the config and its sha256, the config files and their sha256,
                                  and the microservices' declarations (containers/*/microservice.yaml)

It reads only meta.json files, image jsons and declarations: never the raw outputs.

  python -m interference.run_info --config JSON --config-files F... --metas M... \\
      --images I... --runs runs.tsv --environment environment.json"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

from interference import REPO_ROOT
from interference.microservices import registry

# The limits a run records, as columns of runs.tsv (per member k: member<k>_<key>).
REQUESTED_KEYS = ("cpuset", "cpus", "memory")
READ_BACK_KEYS = ("cpuset", "cpu_quota_us", "cpu_period_us", "memory_max", "nproc", "cgroup_version")
HOST_KEYS = ("hostname", "cpu_model", "cores", "memory_bytes", "kernel", "os")
ENGINE_KEYS = ("engine", "version", "cgroup_version", "cgroup_driver", "storage_driver", "kernel", "os")


def sha256_of(obj) -> str:
    """sha256 of a JSON-able value in canonical form (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _shown(path) -> str:
    """A path relative to the repository when inside it (the report names it so)."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO_ROOT))
    except ValueError:
        return str(p)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def run_row(meta_path: Path) -> dict:
    meta = json.loads(meta_path.read_text())
    s = meta["settings"]
    overlap = meta.get("overlap") or {}
    row = {
        "host": s["host"],
        "runtime": s["runtime"],
        "case": str(s["case"]),
        "pair": s["pair"],
        "repetition": int(s["repetition"]),
        "run_id": meta.get("run_id", ""),
        "started": meta.get("started"),
        "finished": meta.get("finished"),
        "duration_s": (meta["finished"] - meta["started"]) if meta.get("finished") else None,
        "iterations_requested": s.get("iterations"),
        "window_s": s.get("window_s"),
        "n_iterations": meta.get("n_iterations"),
        "n_failed": meta.get("n_failed"),
        "n_in_overlap": sum(
            bool(it.get("in_overlap")) for m in meta.get("members", []) for it in m.get("iterations", [])
        ),
        "overlap_start": overlap.get("start"),
        "overlap_end": overlap.get("end"),
        "overlap_s": (overlap["end"] - overlap["start"])
        if overlap.get("start") is not None and overlap.get("end") is not None
        else None,
        "loadavg_1m_before": (meta.get("host_info", {}).get("loadavg_before") or [None])[0],
        "events": " | ".join(meta.get("events", [])),
        "meta": str(meta_path),
    }
    for k in (1, 2):
        members = meta.get("members", [])
        member = members[k - 1] if len(members) >= k else None
        container = _member_container(meta, k) if member else None
        requested = (container or {}).get("limits_requested") or {}
        read_back = (member or {}).get("limits_read_back") or {}
        failed = sum(it.get("status") != "ok" for it in member.get("iterations", [])) if member else None
        row[f"member{k}"] = member["microservice"] if member else ""
        row[f"member{k}_iterations"] = len(member.get("iterations", [])) if member else None
        row[f"member{k}_failed"] = failed
        row[f"member{k}_container"] = (container or {}).get("role", "")
        for key in REQUESTED_KEYS:
            v = requested.get(key)
            row[f"member{k}_requested_{key}"] = "" if v is None else v
        for key in READ_BACK_KEYS:
            row[f"member{k}_read_{key}"] = read_back.get(key, "")
        row[f"member{k}_limits_match"] = limits_match(requested, read_back) if member else ""
    return row


def runs_table(metas: list[Path]) -> pd.DataFrame:
    rows = [run_row(p) for p in metas]
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    order = {"1": 0, "2": 1, "3a": 2, "3b": 3}
    df["_o"] = df["case"].map(order)
    df = df.sort_values(["host", "runtime", "_o", "pair", "repetition"]).drop(columns="_o")
    counts = ["iterations_requested", "window_s", "n_iterations", "n_failed", "n_in_overlap"]
    counts += [f"member{k}_{c}" for k in (1, 2) for c in ("iterations", "failed")]
    for c in counts:
        df[c] = pd.to_numeric(df[c]).astype("Int64")
    return df.reset_index(drop=True)


def _distinct(values: list[dict], keys) -> dict:
    """One dict of keys; a key whose value differs between runs becomes a sorted list."""
    out = {}
    for key in keys:
        seen = []
        for v in values:
            x = v.get(key)
            if x not in seen:
                seen.append(x)
        out[key] = seen[0] if len(seen) == 1 else seen
    return out


def environment(
    metas: list[Path], images: list[Path], config: dict, config_files: list[Path], containers_dir=None
) -> dict:
    loaded = [json.loads(p.read_text()) for p in metas]
    hosts: dict[str, list[dict]] = {}
    engines: dict[str, list[dict]] = {}
    for m in loaded:
        hosts.setdefault(m["settings"]["host"], []).append(m.get("host_info", {}))
        engines.setdefault(m["settings"]["runtime"], []).append(m.get("runtime_info", {}))
    image_rows = []
    for p in images:
        d = json.loads(p.read_text())
        image_rows.append(
            {
                k: d.get(k)
                for k in (
                    "image",
                    "runtime",
                    "ref",
                    "id",
                    "inputs_hash",
                    "microservices",
                    "base_image",
                    "base_image_id",
                    "base_image_source",
                    "built_on",
                    "built_on_id",
                    "engine_version",
                    "tool_versions",
                )
                if k in d
            }
        )
    declared = registry(containers_dir) if containers_dir else registry()
    configured = list(config.get("microservices", []))
    microservices = {}
    for ms_id, ms in declared.items():
        microservices[ms_id] = {
            "name": ms.name,
            "resource": ms.resource,
            "tool": ms.tool,
            "paper_tool": ms.paper_tool,
            "stand_in_reason": ms.stand_in_reason,
            "metrics": [
                {"name": m.name, "unit": m.unit, "higher_is_better": m.higher_is_better} for m in ms.metrics
            ],
            "parameters": {
                k: {kk: vv for kk, vv in v.items() if kk in ("description", "default", "env")}
                for k, v in ms.parameters.items()
            },
            "server": bool(ms.server),
            "in_config": ms_id in configured,
            **({"extra": ms.extra} if ms.extra else {}),
        }
    return {
        "hosts": {h: _distinct(v, HOST_KEYS) for h, v in hosts.items()},
        "engines": {r: _distinct(v, ENGINE_KEYS) for r, v in engines.items()},
        "images": image_rows,
        "config": config,
        "config_sha256": sha256_of(config),
        "config_files": [{"path": _shown(p), "sha256": file_sha256(Path(p))} for p in config_files],
        "microservices": microservices,
        "n_runs": len(loaded),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m interference.run_info",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="the validated config, as JSON")
    ap.add_argument("--config-files", nargs="*", type=Path, default=[], help="the config files used")
    ap.add_argument("--metas", nargs="*", type=Path, default=[], help="every run's meta.json")
    ap.add_argument("--images", nargs="*", type=Path, default=[], help="image jsons")
    ap.add_argument("--runs", type=Path, required=True, help="runs.tsv to write")
    ap.add_argument("--environment", type=Path, required=True, help="environment.json to write")
    a = ap.parse_args(argv)
    config = json.loads(a.config)
    runs = runs_table(a.metas)
    env = environment(a.metas, a.images, config, [p for p in a.config_files if p.exists()])
    a.runs.parent.mkdir(parents=True, exist_ok=True)
    runs.to_csv(a.runs, sep="\t", index=False, float_format="%.6f")
    a.environment.parent.mkdir(parents=True, exist_ok=True)
    a.environment.write_text(json.dumps(env, indent=1, sort_keys=False) + "\n")
    print(f"{len(runs)} runs -> {a.runs}; environment ({len(env['images'])} images) -> {a.environment}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
