"""Slurm for the workflow (profiles/slurm): what it checks before it hands runs to Slurm — a
controller answers and the config's host is one of its nodes (a run goes to the node named by
its host) —, and a single-node Slurm on this machine to try it (the test and the benchmark use
it): munged, slurmctld and slurmd started directly (no systemd), stopped after.

  python -m interference.slurm DIR     a single-node Slurm with its files in DIR until Ctrl-C"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from interference.host_package import HostPackage

# The single-node Slurm of the tests (SingleNode) and the Slurm profile on this machine.
PACKAGES = (
    HostPackage("slurm-wlm", "slurmctld", "Slurm's controller and node daemon"),
    HostPackage("munge", "munged", "Slurm's authentication"),
)


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


def single_node_conf(state: Path, node: str) -> str:
    return (
        "\n".join(
            [
                "ClusterName=interference",
                f"SlurmctldHost={node}",
                "AuthType=auth/munge",
                "ProctrackType=proctrack/linuxproc",  # no cgroup plugin: the runtimes own the cgroups
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"StateSaveLocation={state}/state",
                f"SlurmdSpoolDir={state}/spool",
                f"SlurmctldPidFile={state}/slurmctld.pid",
                f"SlurmdPidFile={state}/slurmd.pid",
                f"SlurmctldLogFile={state}/slurmctld.log",
                f"SlurmdLogFile={state}/slurmd.log",
                "ReturnToService=2",
                "MinJobAge=600",  # squeue keeps finished jobs long enough for snakemake's status checks
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "MpiDefault=none",
                f"NodeName={node} CPUs={os.cpu_count()} State=UNKNOWN",
                "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            ]
        )
        + "\n"
    )


def _munge_answers() -> bool:
    return subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0


DEFAULT_CONF = Path("/etc/slurm/slurm.conf")


class SingleNode:
    """`with SingleNode(dir) as env:` a running one-node Slurm (this machine, named as its
    hostname), its state in dir. Its config goes where every Slurm command looks by default
    (/etc/slurm/slurm.conf): the job-step plugin drops SLURM_CONF from a job's environment. So it
    refuses to start where a Slurm config exists. Everything it made is removed on leaving."""

    def __init__(self, state: Path):
        self.state = Path(state)
        self.conf = DEFAULT_CONF
        self.node = socket.gethostname().split(".")[0]
        self.munged: int | None = None

    def __enter__(self) -> dict:
        if self.conf.exists():
            raise SlurmUnavailable(f"{self.conf} exists: this machine has a Slurm of its own; use it")
        for d in ("state", "spool"):
            (self.state / d).mkdir(parents=True, exist_ok=True)
        self.conf.parent.mkdir(exist_ok=True)
        self.conf.write_text(single_node_conf(self.state, self.node))
        if not _munge_answers():
            key = Path("/etc/munge/munge.key")
            if not key.exists():
                key.write_bytes(os.urandom(1024))
                shutil.chown(key, "munge", "munge")
                key.chmod(0o400)
            Path("/run/munge").mkdir(exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True)
            self.munged = int(Path("/run/munge/munged.pid").read_text())
        env = {**os.environ, "SLURM_CONF": str(self.conf)}
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True)
        subprocess.run(["slurmd", "-f", str(self.conf)], check=True)
        deadline = time.time() + 60
        while (
            "idle"
            not in subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout
        ):
            if time.time() > deadline:
                self.__exit__()
                raise SlurmUnavailable(
                    f"the single-node Slurm did not come up: see {self.state}/slurmctld.log"
                )
            time.sleep(0.5)
        return env

    def __exit__(self, *exc) -> None:
        env = {**os.environ, "SLURM_CONF": str(self.conf)}
        subprocess.run(["scancel", "--full", "-u", "root"], env=env, capture_output=True)
        for daemon in ("slurmd", "slurmctld"):
            pid = self.state / f"{daemon}.pid"
            if pid.exists():
                try:
                    os.kill(int(pid.read_text()), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        if self.munged:
            os.kill(self.munged, signal.SIGTERM)
        deadline = time.time() + 20
        while self.daemons() and time.time() < deadline:
            time.sleep(0.2)
        self.conf.unlink(missing_ok=True)

    def daemons(self) -> list[str]:
        r = subprocess.run(
            ["pgrep", "-a", "-f", f"slurm(ctld|d) -f {self.conf}"], capture_output=True, text=True
        )
        return r.stdout.splitlines()


if __name__ == "__main__":
    with SingleNode(Path(sys.argv[1])) as env:
        print(f"Slurm is up ({env['SLURM_CONF']}); Ctrl-C stops it", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
