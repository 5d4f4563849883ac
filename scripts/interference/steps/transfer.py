"""Moving one host's results to the machine that writes the report.

  python -m interference.steps.transfer export [--host H] [--out FILE.tar.gz]
  python -m interference.steps.transfer import SOURCE [--config FILE]

`export` packs results/raw/<host>/ with a manifest of every file's sha256. `import` takes such a
tarball (or its unpacked folder), verifies it — every listed file present and unchanged, nothing
unlisted —, checks every run against this config's definition of its study (the same settings
but the host, for a run the config has), and only then moves it into results/raw/<host>/ in one
rename and records it in results/imported/<host>.json. The workflow parses and includes those
runs in the statistics and the report; its run rule runs only the config's own host, so an
imported run is never rerun here. On any error nothing in results/ is changed."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import socket
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from interference import studies
from interference.steps.config import ConfigError, read_yaml, validate
from interference.stores import tarballs
from interference.stores.checksums import sha256, verify_files

MANIFEST = "MANIFEST.json"
FORMAT = 1


class TransferError(ValueError):
    """The import is refused; the message says which file or run and why."""


def export(results: Path, host: str, out: Path) -> Path:
    raw = results / "raw" / host
    files = sorted(p for p in raw.rglob("*") if p.is_file())
    if not any(p.name == "meta.json" for p in files):
        raise TransferError(f"{raw} holds no finished run (no meta.json)")
    manifest = {
        "format": FORMAT,
        "host": host,
        "exported_at": time.time(),
        "files": {str(p.relative_to(raw)): sha256(p) for p in files},
    }
    with tarfile.open(out, "w:gz") as tar:
        data = (json.dumps(manifest, indent=1) + "\n").encode()
        info = tarfile.TarInfo(f"{host}/{MANIFEST}")
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
        for p in files:
            tar.add(p, f"{host}/{p.relative_to(raw)}")
    return out


def _verify(root: Path) -> dict:
    """The manifest of an unpacked export whose files all match it."""
    try:
        manifest = json.loads((root / MANIFEST).read_text())
        listed, host = manifest["files"], manifest["host"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TransferError(
            f"{root}: no readable {MANIFEST} ({e}); was it made by `transfer export`?"
        ) from None
    if manifest.get("format") != FORMAT:
        raise TransferError(f"{root}: manifest format {manifest.get('format')!r}, this code reads {FORMAT}")
    verify_files(root, listed, MANIFEST, f"import of {host}", TransferError)
    return manifest


def expected_settings(cfg: dict, study: str, runtime: str, key: str, rep: int) -> dict | None:
    """What this config would run for that run (without the host), or None if it has no such run."""
    part = cfg["studies"].get(study)
    if part is None or runtime not in part["runtimes"]:
        return None
    s = studies.get(study)
    if not any(r.key == key and r.repetition == rep for r in s.runs_on(part, runtime)):
        return None
    return studies.run_settings(cfg, study, runtime, key, rep)


def _check_definitions(root: Path, manifest: dict, cfg: dict) -> list[dict]:
    runs = []
    for rel in sorted(r for r in manifest["files"] if r.endswith("/meta.json")):
        settings = json.loads((root / rel).read_text())["settings"]
        got = {k: v for k, v in settings.items() if k != "host"}
        want = expected_settings(cfg, got["study"], got["runtime"], got["key"], got["repetition"])
        where = f"{manifest['host']}/{rel}"
        if want is None:
            raise TransferError(
                f"{where}: this config has no run {got['study']} {got['runtime']} {got['key']} "
                f"rep{got['repetition']}; import with the config the other host ran"
            )
        if diff := sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k)):
            detail = "; ".join(f"{k}: ran {got.get(k)!r}, this config {want.get(k)!r}" for k in diff)
            raise TransferError(f"{where}: a different definition of study {got['study']} ({detail})")
        runs.append({k: got[k] for k in ("runtime", "study", "key", "repetition")})
    if not runs:
        raise TransferError(f"import of {manifest['host']}: no finished run (no meta.json)")
    return runs


def import_results(source: Path, results: Path, raw_config: dict) -> dict:
    """Verify, check and move in an export; the record written to results/imported/<host>.json.
    The runs are checked against raw_config as their host reads it (its `hosts` overrides)."""
    own = validate(raw_config)["host"]
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=results, prefix=".import-") as tmp:
        if source.is_dir():
            root = source
        else:
            try:
                with tarfile.open(source) as tar:
                    tarballs.extract(tar, tmp)
            except (OSError, tarfile.TarError) as e:
                raise TransferError(f"{source}: not a readable tarball ({e})") from None
            tops = list(Path(tmp).iterdir())
            if len(tops) != 1:
                raise TransferError(f"{source}: expected one host folder, found {len(tops)}")
            root = tops[0]
        manifest = _verify(root)
        host = manifest["host"]
        if host == own:
            raise TransferError(
                f"{source} holds results of {host}, this config's own host: nothing to import"
            )
        dest = results / "raw" / host
        if dest.exists():
            raise TransferError(f"{dest} exists already; move it away to import {host} again")
        runs = _check_definitions(
            root, manifest, validate(raw_config | {"host": host}, f"the config as {host} reads it")
        )
        record = {"host": host, "source": str(source), "imported_at": time.time(), "runs": runs}
        if source.is_dir():  # the source stays as it was
            shutil.copytree(root, Path(tmp) / "copy")
            root = Path(tmp) / "copy"
        # The runs land in one rename; the manifest is kept beside the record the workflow reads.
        manifest_text = (root / MANIFEST).read_text()
        (root / MANIFEST).unlink()
        dest.parent.mkdir(parents=True, exist_ok=True)
        root.rename(dest)
        imported = results / "imported"
        imported.mkdir(exist_ok=True)
        (imported / f"{host}.manifest.json").write_text(manifest_text)
        (imported / f"{host}.json").write_text(json.dumps(record, indent=1) + "\n")
        return record


def imported_runs(results: Path, study: str) -> list[tuple[str, dict]]:
    """(host, run) of every imported run of a study (the workflow's input function reads it)."""
    out = []
    for path in sorted((results / "imported").glob("*.json")):
        if path.name.endswith(".manifest.json"):
            continue
        record = json.loads(path.read_text())
        out += [(record["host"], r) for r in record["runs"] if r["study"] == study]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="pack results/raw/<host>/ with checksums")
    ex.add_argument("--host", default=socket.gethostname().split(".")[0])
    ex.add_argument("--out", type=Path)
    im = sub.add_parser("import", help="verify and add another host's export")
    im.add_argument("source", type=Path)
    im.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    for p in (ex, im):
        p.add_argument("--results", type=Path, default=Path("results"))
    a = ap.parse_args(argv)
    try:
        if a.command == "export":
            out = export(a.results, a.host, a.out or Path(f"results-{a.host}.tar.gz"))
            print(f"wrote {out}")
        else:
            record = import_results(a.source, a.results, read_yaml(a.config))
            print(
                f"imported {len(record['runs'])} runs of {record['host']} into {a.results}/raw/{record['host']}"
            )
    except (TransferError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
