"""The environment the runs had, for the report: results/stats/environment.json. Host (CPU
model, cores, memory, kernel), engine (version, cgroup version and driver), images (refs, ids,
tool versions), the config and its sha256, the config files and their sha256, and the
microservices' declarations (containers/*/microservice.yaml). From meta.json files, image jsons
and declarations only: never the raw outputs.

  python -m interference.steps.environment --metas M... --config JSON --config-files F... \\
      --images I... --out results/stats/environment.json"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from interference import REPO_ROOT
from interference.core import records
from interference.core.microservices import registry

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m interference.steps.environment", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--metas", nargs="*", type=Path, default=[], help="every run's meta.json")
    ap.add_argument("--config", required=True, help="the validated config, as JSON")
    ap.add_argument("--config-files", nargs="*", type=Path, default=[], help="the config files used")
    ap.add_argument("--images", nargs="*", type=Path, default=[], help="image jsons")
    ap.add_argument("--out", type=Path, required=True, help="environment.json to write")
    a = ap.parse_args(argv)
    env = environment(a.metas, a.images, json.loads(a.config), [p for p in a.config_files if p.exists()])
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(env, indent=1, sort_keys=False) + "\n")
    print(f"environment ({len(env['images'])} images, {env['n_runs']} runs) -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
