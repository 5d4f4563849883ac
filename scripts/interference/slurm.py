"""What the workflow checks before it hands runs to Slurm (profiles/slurm): a controller answers
and the config's host is one of its nodes (a run goes to the node named by its host)."""

from __future__ import annotations

import shutil
import subprocess


class SlurmUnavailable(RuntimeError):
    pass


def nodes() -> list[str]:
    if shutil.which("sinfo") is None:
        raise SlurmUnavailable("Slurm's `sinfo` is not installed here (Debian: apt-get install slurm-client)")
    try:
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise SlurmUnavailable("no Slurm controller answered `sinfo` within 30 s") from None
    if r.returncode != 0:
        raise SlurmUnavailable(f"no Slurm controller answers (`sinfo`: {r.stderr.strip()})")
    return sorted(set(r.stdout.split()))


def check_node(host: str) -> None:
    known = nodes()
    if host not in known:
        raise SlurmUnavailable(
            f"the config's host {host!r} is not a Slurm node (nodes: {', '.join(known) or 'none'}); runs go to "
            f"the node their host names: set it with --config host=NODE"
        )
