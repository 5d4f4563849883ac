"""Slurm for the workflow (profiles/slurm): what it checks before it hands runs to Slurm — a
controller answers, and each host with runs to do is a node that takes jobs, sees the working
folder and has its runtimes (a run goes to the node named by its host). The cluster the tests
and benchmarks make on this machine is in slurm_local.py."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from interference.host.packages import HostPackage

# The local cluster of the tests (slurm_local.py) and the Slurm profile on this machine.
PACKAGES = (
    HostPackage("slurm-wlm", "slurmctld", "Slurm's controller and node daemon"),
    HostPackage("munge", "munged", "Slurm's authentication"),
)


class SlurmUnavailable(RuntimeError):
    pass


def node_states() -> dict[str, tuple[str, str]]:
    """Each node of the cluster: (state, reason), as sinfo gives them."""
    if shutil.which("sinfo") is None:
        raise SlurmUnavailable("Slurm's `sinfo` is not installed here (Debian: apt-get install slurm-client)")
    try:
        r = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N|%t|%E"], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        raise SlurmUnavailable("no Slurm controller answered `sinfo` within 30 s") from None
    if r.returncode != 0:
        raise SlurmUnavailable(f"no Slurm controller answers (`sinfo`: {r.stderr.strip()})")
    out = {}
    for line in r.stdout.splitlines():
        node, state, reason = line.split("|", 2)
        out[node] = (state, reason)
    return out


# A node in these states takes no job (a trailing * means its slurmd does not answer).
UNUSABLE = ("down", "drain", "fail", "unk", "futr", "maint", "npc", "inval")


def check_nodes(runtimes_by_host: dict[str, list[str]], folder: Path, options: dict | None = None) -> None:
    """Each host is a node that responds, sees `folder` (the working folder every job writes to)
    and has the runtimes its runs use: asked on the node itself (interference.steps.slurm_node_check,
    one short job each). Raises SlurmUnavailable naming the node and what is wrong."""
    states = node_states()
    unknown = [h for h in runtimes_by_host if h not in states]
    if unknown:
        raise SlurmUnavailable(
            f"the config's host {', '.join(map(repr, unknown))} is not a Slurm node (nodes: "
            f"{', '.join(sorted(states)) or 'none'}); runs go to the node their host names: set it "
            "with --config host=NODE or run_on=[NODE,...]"
        )
    for host in sorted(runtimes_by_host):
        state, reason = states[host]
        if state.endswith("*") or state.rstrip("*~#!%$@^-+").startswith(UNUSABLE):
            raise SlurmUnavailable(
                f"node {host!r} takes no jobs (state {state}"
                + (f", reason: {reason}" if reason and reason != "none" else "")
                + "): is its slurmd running, and is its munge key this machine's?"
            )
    token = secrets.token_hex(8)
    mark = Path(folder) / ".snakemake" / f"node-check-{token}"
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text(token)
    try:
        for host, rts in sorted(runtimes_by_host.items()):
            argv = ["srun", f"--nodelist={host}", "-N1", "-n1", "--immediate=60", "--time=5",
                    "--job-name=interference-node-check", f"--chdir={folder}",
                    sys.executable, "-m", "interference.steps.slurm_node_check",
                    "--mark", str(mark), "--token", token,
                    "--options", json.dumps(options or {}), *rts]  # fmt: skip
            try:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=180,
                                   env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})  # fmt: skip
            except subprocess.TimeoutExpired:
                raise SlurmUnavailable(
                    f"node {host!r} did not run a 5-second check job within 180 s"
                ) from None
            if r.returncode != 0:
                # The check's own words (stdout), else what Slurm said (srun's last line).
                said = (
                    r.stdout.strip() or (r.stderr.strip().splitlines() or [f"srun exit {r.returncode}"])[-1]
                )
                raise SlurmUnavailable(f"node {host!r}: {said}")
    finally:
        mark.unlink(missing_ok=True)


def cap_status_interval(executor_class: type, seconds: float) -> None:
    """Make `executor_class` (the Slurm executor plugin's) check its jobs at least every `seconds`.

    The plugin (2.8.0) adds 10 s to its interval after each check in which no job finished, up to
    180 s, so that a large cluster's controller is not flooded. A host's study here is one long
    Slurm job (profiles/slurm groups it), so the interval had grown to ~80 s when it ended: as
    long again as the whole parse, statistics and report that follow. One squeue every few
    seconds is nothing for a controller; the cap keeps the end of a study prompt."""
    interval = executor_class.next_seconds_between_status_checks
    if not isinstance(interval, property) or interval.fset is None:
        raise SlurmUnavailable(
            f"{executor_class.__module__}.{executor_class.__name__} no longer has the status interval "
            "this workflow caps (next_seconds_between_status_checks): check the pinned plugin version"
        )
    executor_class.next_seconds_between_status_checks = property(
        interval.fget, lambda self, value: interval.fset(self, min(value, seconds))
    )
