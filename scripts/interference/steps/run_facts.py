"""Collect what the report says about the runs: one row per run and per member, and the
environment.

  results/stats/<study>/runs.tsv  one row per run of a study: when it ran, iterations and
                                  failures, events, and the study's own columns (the pair study:
                                  case, pair, the overlap window)
  results/stats/<study>/run_members.tsv
                                  one row per member of a run (member, role, microservice) and
                                  the study's facts about it (the pair study: workload sizes,
                                  the cgroup limits requested and read back, threads); both
                                  tables are made in steps/run_tables.py
  results/stats/environment.json  host (CPU model, cores, memory, kernel), engine (version,
                                  cgroup version and driver), images (refs, ids, tool versions),
                                  the config and its sha256, the config files and their sha256,
                                  and the microservices' declarations (containers/*/microservice.yaml)
  results/stats/run_order.tsv     per host: how the runs' start times (the runs.tsv above) follow
                                  the planned order of the config's run_order (Kendall's tau)

It reads only meta.json files, image jsons, declarations and the runs.tsv it wrote: never the raw
outputs.

  python -m interference.steps.run_facts --study S --metas M... --runs results/stats/S/runs.tsv \\
      --members results/stats/S/run_members.tsv
  python -m interference.steps.run_facts --metas M... --config JSON --config-files F... --images I... \\
      --environment results/stats/environment.json
  python -m interference.steps.run_facts --runs-tables T... --order JSON --run-order results/stats/run_order.tsv"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

from interference import REPO_ROOT
from interference.core import records, run_order
from interference.core.microservices import registry
from interference.core.table_schema import TableSchemaError
from interference.steps.run_tables import members_table, runs_table

HOST_KEYS = ("hostname", "cpu_model", "cores", "memory_bytes", "kernel", "os")
ENGINE_KEYS = (
    "engine",
    "version",
    "cgroup_version",
    "cgroup_driver",
    "storage_driver",
    "kernel",
    "os",
    "details",
)


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
    loaded = [records.load(p) for p in metas]
    hosts: dict[str, list[dict]] = {}
    engines: dict[str, list[dict]] = {}
    for m in loaded:
        hosts.setdefault(m.identity.host, []).append(m.host_info)
        engines.setdefault(m.identity.runtime, []).append(m.runtime_info)
    image_rows = []
    for p in images:
        d = json.loads(p.read_text())
        image_rows.append(
            {"host": p.parent.parent.name}  # results/images/<host>/<runtime>/<image>.json
            | {
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
    configured = {m for s in config.get("studies", {}).values() for m in s.get("microservices", [])}
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


def order_agreement(runs: pd.DataFrame, order: dict, host: str) -> dict:
    """How the runs of `host` in runs.tsv rows (study, runtime, key, repetition, started) were
    executed against the plan of the config `order` ({shuffle, seed}); `last` are the rows whose
    study put them after the others (column `after_all`, when present). The plan is a pure
    function of the set of runs and the seed, so it is recomputed here from what ran."""
    r = runs[(runs["host"] == host) & runs["started"].notna()].copy()
    if r.empty:
        return {"n_runs": 0}
    ids = list(zip(r["study"], r["runtime"], r["key"], r["repetition"].astype(int)))
    last_mask = (
        r["after_all"].fillna(False).astype(bool) if "after_all" in r else pd.Series(False, index=r.index)
    )
    positions = run_order.plan(
        [i for i, m in zip(ids, last_mask) if not m], [i for i, m in zip(ids, last_mask) if m], **order
    )
    planned = [positions[i] for i in ids]
    executed = r["started"].rank(method="first").astype(int) - 1
    from scipy import stats  # here: the step's other tables need none of scipy's import time

    # Both orders are permutations (no ties), so tau-b is the plain share of concordant pairs
    # minus discordant ones; one run agrees with itself.
    tau = stats.kendalltau(planned, executed).statistic if len(r) > 1 else 1.0
    return {
        "n_runs": len(r),
        "kendall_tau": float(tau),
        "span_s": float(r["started"].max() - r["started"].min()),
    }


ORDER_COLUMNS = ["host", "n_runs", "kendall_tau", "span_s", "shuffle", "seed"]


def run_order_table(runs: pd.DataFrame, order: dict) -> pd.DataFrame:
    """One row per host with started runs: ORDER_COLUMNS (the plan's shuffle and seed beside
    the agreement, so the report states the plan from this table, not from the config)."""
    order = {"shuffle": True, "seed": 1} | dict(order)  # the validated config's defaults
    rows = []
    if len(runs) and "started" in runs:
        runs = runs.assign(started=pd.to_numeric(runs["started"], errors="coerce"))
        for host in sorted(runs["host"].astype(str).unique()):
            a = order_agreement(runs, order, host)
            if a["n_runs"]:
                rows.append(
                    {"host": host, **a, "shuffle": bool(order["shuffle"]), "seed": int(order["seed"])}
                )
    return pd.DataFrame(rows, columns=ORDER_COLUMNS)


def read_runs(paths: list[Path]) -> pd.DataFrame:
    """Every study's runs.tsv as one frame (ids as text; an empty file adds nothing)."""
    frames = []
    for p in paths:
        try:
            df = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
        except pd.errors.EmptyDataError:
            continue  # a study without runs writes a runs.tsv without columns
        if "after_all" in df:
            df["after_all"] = df["after_all"].str.strip().str.lower().isin(["true", "1", "yes"])
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m interference.steps.run_facts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--metas", nargs="*", type=Path, default=[], help="every run's meta.json")
    ap.add_argument("--study", help="the study whose runs --metas are (with --members)")
    ap.add_argument("--runs", type=Path, help="runs.tsv to write (one study's metas)")
    ap.add_argument("--members", type=Path, help="run_members.tsv to write (one study's metas)")
    ap.add_argument("--environment", type=Path, help="environment.json to write")
    ap.add_argument("--config", help="the validated config, as JSON (with --environment)")
    ap.add_argument("--config-files", nargs="*", type=Path, default=[], help="the config files used")
    ap.add_argument("--images", nargs="*", type=Path, default=[], help="image jsons")
    ap.add_argument("--runs-tables", nargs="*", type=Path, default=[], help="every study's runs.tsv")
    ap.add_argument("--order", help="the config's run_order, as JSON (with --run-order)")
    ap.add_argument("--run-order", type=Path, help="run_order.tsv to write (from --runs-tables)")
    a = ap.parse_args(argv)
    if a.members:
        if a.study is None:
            ap.error("--members needs --study")
        try:
            members = members_table(a.metas, a.study)
        except TableSchemaError as e:
            print(e, file=sys.stderr)
            return 1
        a.members.parent.mkdir(parents=True, exist_ok=True)
        members.to_csv(a.members, sep="\t", index=False, float_format="%.6f")
        print(f"{len(members)} members of runs -> {a.members}")
    if a.runs:
        runs = runs_table(a.metas)
        a.runs.parent.mkdir(parents=True, exist_ok=True)
        runs.to_csv(a.runs, sep="\t", index=False, float_format="%.6f")
        print(f"{len(runs)} runs -> {a.runs}")
    if a.environment:
        if a.config is None:
            ap.error("--environment needs --config")
        env = environment(a.metas, a.images, json.loads(a.config), [p for p in a.config_files if p.exists()])
        a.environment.parent.mkdir(parents=True, exist_ok=True)
        a.environment.write_text(json.dumps(env, indent=1, sort_keys=False) + "\n")
        print(f"environment ({len(env['images'])} images, {env['n_runs']} runs) -> {a.environment}")
    if a.run_order:
        if a.order is None:
            ap.error("--run-order needs --order")
        table = run_order_table(read_runs(a.runs_tables), json.loads(a.order))
        a.run_order.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(a.run_order, sep="\t", index=False, float_format="%.6f")
        print(f"run order of {len(table)} hosts -> {a.run_order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
