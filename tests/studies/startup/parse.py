"""The startup study's parser: one sample per run, its start-to-exit time."""

from __future__ import annotations

from interference.samples import Sample, frame


def parse(meta, raw_dir):
    s = meta["settings"]
    ok = meta["n_failed"] == 0
    sample = Sample(
        "seconds",
        meta["seconds"] if ok else None,
        "s",
        False,
        "ok" if ok else f"exit codes {meta['exit_codes']}",
    )
    identity = {k: s[k] for k in ("host", "runtime", "instances", "repetition")}
    return frame([sample.row(**identity)], list(identity))
