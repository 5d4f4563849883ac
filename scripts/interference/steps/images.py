"""Build the images a config needs, as tracked artifacts: results/images/<host>/<runtime>/<name>.json.

  base     the configured Debian base (present, pulled, or made by debootstrap and imported)
           plus containers/base/ (the loop driver)
  L        containers/<L's folder>/ built on base
  L+S      containers/<S's folder>/ built on the image of L (Case 2 runs both in one container)

An image is tagged with the hash of its build inputs, so it is rebuilt only when they change."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from interference import REPO_ROOT, runtimes
from interference.core.microservices import registry
from interference.host.locks import measurement_lock
from interference.host.packages import HostPackage


def _base_image_in_docker() -> bool:
    """Docker already holds a Debian base or the project's base image: no debootstrap needed."""
    if shutil.which("docker") is None:
        return False
    r = subprocess.run(
        ["docker", "image", "ls", "-q", "--filter", "reference=debian:bookworm-slim",
         "--filter", "reference=interference/base"],
        capture_output=True, text=True,
    )  # fmt: skip
    return r.returncode == 0 and bool(r.stdout.strip())


# What a runtime that builds its own images needs: the base image is made by debootstrap when
# no registry serves it (none is reachable on the machines this was built on), unless the
# engine has it already.
BUILD_PACKAGES = (
    HostPackage(
        "debootstrap",
        "debootstrap",
        "the base image when no registry serves it",
        present_if=_base_image_in_docker,
    ),
)

CONTAINERS = REPO_ROOT / "containers"
MICROSERVICE_DOCKERFILE = CONTAINERS / "Dockerfile.microservice"


def inputs_hash(*parts: str | Path) -> str:
    """sha256 over literal strings and the names and bytes of files (folders: all files, sorted)."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, str):
            h.update(part.encode())
            continue
        for f in sorted(part.rglob("*")) if part.is_dir() else [part]:
            if f.is_file():
                h.update(str(f.relative_to(REPO_ROOT)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def ensure_base_os(rt, ref: str, mirror: str, suite: str, log: Path) -> str:
    """The configured base image: already present, pulled, or made from Debian's packages."""
    if rt.image_id(ref):
        return "present"
    if rt.pull(ref, log):
        return "pulled"
    if shutil.which("debootstrap") is None:
        raise RuntimeError(
            f"{ref} is neither present nor pullable and debootstrap is not installed "
            "(apt-get install debootstrap) to make it."
        )
    with tempfile.TemporaryDirectory(prefix="interference-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        with open(log, "a") as f:
            f.write(f"$ debootstrap --variant=minbase {suite} {rootfs} {mirror}\n")
            f.flush()
            subprocess.run(
                ["debootstrap", "--variant=minbase", suite, str(rootfs), mirror],
                stdout=f,
                stderr=subprocess.STDOUT,
                check=True,
            )
        # debootstrap leaves the package lists and apt's caches (about 80 MB) in the base
        # that every image, nested parent and VM disk carries: each install fetches its own.
        for pattern in ("var/lib/apt/lists/*_*", "var/cache/apt/*.bin", "var/cache/apt/archives/*.deb"):
            for p in rootfs.glob(pattern):
                p.unlink()
        rt.import_rootfs(rootfs, ref, log)
    return "debootstrap"


def convert_image(rt, name: str, source_json: Path, log: Path) -> dict:
    """A runtime that runs another's images (bare metal: a root file system) converts them."""
    source = json.loads(source_json.read_text())
    # The base image it was built on (beside it), for runtimes that build infrastructure on it.
    base = source_json.parent / "base.json"
    source["base"] = json.loads(base.read_text()) if base.exists() else None
    # The runtime's own build inputs (a VM's init, nested's parent) are part of the name: a change
    # of them makes a new image instead of reusing the one made with the old files.
    digest = hashlib.sha256(source["inputs_hash"].encode())
    for rel in rt.build_inputs:
        digest.update((REPO_ROOT / rel).read_bytes())
    ref = f"interference/{name.lower().replace('+', '-')}:{digest.hexdigest()[:12]}"
    reused = rt.image_id(ref) is not None
    image_id = rt.image_id(ref) if reused else rt.convert(source, ref, log)
    return {
        "ref": ref,
        "id": image_id,
        "inputs_hash": source["inputs_hash"],
        "microservices": source["microservices"],
        "converted_from": source["ref"],
        "converted_from_id": source["id"],
        "converted_from_runtime": source["runtime"],
        "reused_existing": reused,
        "tool_versions": source.get("tool_versions", {}),
    }


def build_image(
    name: str,
    runtime: str,
    out: Path,
    log: Path,
    on: Path | None,
    base_image: str,
    mirror: str,
    suite: str,
    options: dict | None = None,
) -> dict:
    rt = runtimes.get(runtime, options)
    rt.check()
    engine = rt.describe()
    started = time.time()
    if rt.capabilities.image_from:
        info = {"image": name, "runtime": runtime, **convert_image(rt, name, on, log)}
        info.update(build_seconds=round(time.time() - started, 2), engine_version=engine.get("version"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(info, indent=2) + "\n")
        return info
    if name == "base":
        source = ensure_base_os(rt, base_image, mirror, suite, log)
        base_id = rt.image_id(base_image)
        digest = inputs_hash(base_id, CONTAINERS / "base")
        ref = f"interference/base:{digest[:12]}"
        context, dockerfile, args, ids = (
            CONTAINERS / "base",
            CONTAINERS / "base" / "Dockerfile",
            {"BASE_IMAGE": base_image},
            [],
        )
        provenance = {"base_image": base_image, "base_image_id": base_id, "base_image_source": source}
    else:
        parent = json.loads(on.read_text())
        ids = name.split("+")
        ms = registry()[ids[-1]]
        digest = inputs_hash(parent["id"], MICROSERVICE_DOCKERFILE, ms.folder)
        ref = f"interference/{'-'.join(i.lower() for i in ids)}:{digest[:12]}"
        context, dockerfile = ms.folder, MICROSERVICE_DOCKERFILE
        args = {"BASE_IMAGE": parent["ref"], "MICROSERVICE_ID": ms.id}
        provenance = {"built_on": parent["ref"], "built_on_id": parent["id"]}
    reused = rt.image_id(ref) is not None
    if not reused:
        rt.build(context, dockerfile, ref, args, {"interference.inputs_hash": digest}, log)
    info = {
        "image": name,
        "runtime": runtime,
        "ref": ref,
        "id": rt.image_id(ref),
        "inputs_hash": digest,
        "microservices": ids,
        **provenance,
        "reused_existing": reused,
        "build_seconds": round(time.time() - started, 2),
        "engine_version": engine["version"],
        "tool_versions": rt.tool_versions(ref) if ids else {},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="base, a microservice id, or a pair like L+S")
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--options", default="{}", help="JSON: runtime_options of this runtime")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--on", type=Path, help="the image json this one is built on (not for base)")
    ap.add_argument("--base-image", default="debian:bookworm-slim")
    ap.add_argument("--mirror", default="http://deb.debian.org/debian")
    ap.add_argument("--suite", default="bookworm")
    a = ap.parse_args(argv)
    if a.name != "base" and a.on is None:
        ap.error("--on is required for a microservice image (and for a converted one)")
    a.log.parent.mkdir(parents=True, exist_ok=True)
    # Builds load the machine, so they never run beside a measurement.
    try:
        with measurement_lock():
            info = build_image(
                a.name, a.runtime, a.out, a.log, a.on, a.base_image, a.mirror, a.suite, json.loads(a.options)
            )
    except runtimes.RuntimeUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(
        f"{a.name}: {info['ref']} {info['id']} "
        f"({'reused' if info['reused_existing'] else 'built'} in {info['build_seconds']} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
