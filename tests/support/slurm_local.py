"""A Slurm cluster on this machine, for the tests and benchmarks of profiles/slurm: Debian's
slurm-wlm and munge, started directly (no systemd), everything stopped and removed on leaving.

- One node: this machine (named NODE, its hostname by default): slurmctld and a slurmd.
- Two nodes: besides it, node `edge` (edge_node.py): a container with its own Docker engine,
  munge and slurmd, confined to a host cgroup of a few cores and some memory (paper 004's edge
  device). It shares with this machine the folders every job needs, at the same paths (the
  repository with its venv, the working folder, the Python the venv was made from) — what a
  real cluster's shared file system gives —, the munge key and slurm.conf.

  PYTHONPATH=scripts:tests python -m support.slurm_local DIR [--node NAME] [--edge] [--share PATH...] [--images-for CONFIG]
      the cluster with its files in DIR until Ctrl-C"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from interference import REPO_ROOT
from interference.host.slurm import SlurmUnavailable, node_states

from support.edge_node import EdgeNode

# Where every Slurm command looks by default: the job-step plugin drops SLURM_CONF from a job's
# environment, so the cluster's config must be there (and nothing else's).
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
MUNGE_KEY = Path("/etc/munge/munge.key")


def cluster_conf(
    state: Path, controller: str, nodes: list[tuple[str, str | None, int]], spool: Path | None = None
) -> str:
    """slurm.conf for a controller on this machine and nodes (name, address or None, cpus). The
    node daemons' files carry the node's name (%n): the nodes share the state folder. `spool`
    (default state): where each slurmd's spool folder goes; a job step's socket there must
    have a path under 108 characters (AF_UNIX), which a deep test folder can exceed."""
    ctl_addr = next((addr for name, addr, _ in nodes if name == controller), None)
    lines = [
        "ClusterName=interference",
        f"SlurmctldHost={socket.gethostname()}" + (f"({ctl_addr})" if ctl_addr else ""),
        "AuthType=auth/munge",
        "ProctrackType=proctrack/linuxproc",  # no cgroup plugin: the runtimes own the cgroups
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={state}/state",
        f"SlurmdSpoolDir={spool or state}/spool-%n",
        f"SlurmctldPidFile={state}/slurmctld.pid",
        f"SlurmdPidFile={state}/slurmd-%n.pid",
        f"SlurmctldLogFile={state}/slurmctld.log",
        f"SlurmdLogFile={state}/slurmd-%n.log",
        "ReturnToService=2",  # a node that was lost takes jobs again once its slurmd is back
        "JobRequeue=0",
        "KillWait=5",  # a cancelled job's processes get 5 s between SIGTERM and SIGKILL  # a run on a lost node fails (and is recorded), it is not run twice
        "SlurmdTimeout=15",  # a lost node is declared down within 15 s (the tests wait for it)
        "MinJobAge=600",  # squeue keeps finished jobs long enough for snakemake's status checks
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none",
    ]
    for name, addr, cpus in nodes:
        # This machine's node may be named otherwise than the machine (fog): its slurmd runs with -N.
        where = f" NodeHostname={socket.gethostname()}" if name == controller else ""
        addr = addr or (socket.gethostname() if name == controller else None)
        lines.append(
            f"NodeName={name}{where}" + (f" NodeAddr={addr}" if addr else "") + f" CPUs={cpus} State=UNKNOWN"
        )
    lines.append("PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def _munge_answers() -> bool:
    return subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0


class LocalCluster:
    """`with LocalCluster(dir) as env:` a running Slurm (env: the environment to call it with),
    its files in dir. `node`: this machine's node name (default its hostname); `edge`: an
    EdgeNode to add as a second node. Refuses to start where a Slurm config exists."""

    def __init__(self, state: Path, node: str | None = None, edge: EdgeNode | None = None):
        self.state = Path(state).resolve()
        self.conf = DEFAULT_CONF
        self.node = node or socket.gethostname().split(".")[0]
        self.edge = edge
        self.munged: int | None = None
        self.spool: Path | None = None

    @property
    def env(self) -> dict:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def __enter__(self) -> dict:
        if self.conf.exists():
            raise SlurmUnavailable(f"{self.conf} exists: this machine has a Slurm of its own; use it")
        for d in ("state", "etc"):
            (self.state / d).mkdir(parents=True, exist_ok=True)
        # The slurmds' spool folders in a short path: a batch step's socket is named
        # <spool>/<node>_<job>.4294967291, and a runner's temporary folder can be deep enough to
        # take it past the 108 characters of a socket's path (act's was, at 110: no job started).
        self.spool = Path(tempfile.mkdtemp(prefix="slurm-spool-"))
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self.env

    def _start(self) -> None:
        if not _munge_answers():
            if not MUNGE_KEY.exists():
                MUNGE_KEY.write_bytes(os.urandom(1024))
                shutil.chown(MUNGE_KEY, "munge", "munge")
                MUNGE_KEY.chmod(0o400)
            Path("/run/munge").mkdir(exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True)
            self.munged = int(Path("/run/munge/munged.pid").read_text())
        nodes: list[tuple[str, str | None, int]] = [(self.node, None, os.cpu_count() or 1)]
        if self.edge:
            # The edge's slurmd reaches the controller, and the controller it, over the bridge.
            self.edge.start(self.state / "etc", MUNGE_KEY, [self.state, self.spool])
            nodes = [
                (self.node, self.edge.gateway(), os.cpu_count() or 1),
                (self.edge.name, self.edge.address(), self.edge.cpus),
            ]
        text = cluster_conf(self.state, self.node, nodes, self.spool)
        self.conf.parent.mkdir(exist_ok=True)
        self.conf.write_text(text)
        (self.state / "etc" / "slurm.conf").write_text(text)  # the edge's /etc/slurm
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True)
        subprocess.run(["slurmd", "-f", str(self.conf), "-N", self.node], check=True)
        if self.edge:
            self.edge.start_slurmd()
        self.wait_ready([n for n, _, _ in nodes])

    def wait_ready(self, names: list[str], seconds: float = 90) -> None:
        """Each node idle and running a job: a node that has just come back (a new slurmd, a
        munge key restored) can show idle before the controller's next ping finds it answering."""
        deadline = time.time() + seconds
        while True:
            try:
                states = node_states()
            except SlurmUnavailable:
                states = {}
            if all(states.get(n, ("",))[0] == "idle" for n in names) and all(
                self._runs_a_job(n, deadline) for n in names
            ):
                return
            if time.time() > deadline:
                raise SlurmUnavailable(
                    f"the local Slurm did not come up (nodes: {states}): see {self.state}/slurmctld.log "
                    f"and {self.state}/slurmd-*.log"
                )
            time.sleep(0.5)

    def _runs_a_job(self, node: str, deadline: float) -> bool:
        argv = ["srun", f"--nodelist={node}", "-N1", "-n1", "--immediate=10", "--time=1", "true"]
        try:
            r = subprocess.run(
                argv, env=self.env, capture_output=True, timeout=max(5, deadline - time.time())
            )
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0

    def __exit__(self, *exc) -> None:
        subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, capture_output=True)
        if self.edge:
            self.edge.stop()
        for pid in [self.state / "slurmctld.pid", self.state / f"slurmd-{self.node}.pid"]:
            if pid.exists():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid.read_text()), signal.SIGTERM)
        if self.munged:
            os.kill(self.munged, signal.SIGTERM)
        deadline = time.time() + 20
        while self.daemons() and time.time() < deadline:
            time.sleep(0.2)
        self.conf.unlink(missing_ok=True)
        if self.spool:
            shutil.rmtree(self.spool, ignore_errors=True)

    def daemons(self) -> list[str]:
        r = subprocess.run(
            ["pgrep", "-a", "-f", f"slurm(ctld|d) -f {self.conf}"], capture_output=True, text=True
        )
        return r.stdout.splitlines()


def images_for(config: Path, workdir: Path) -> list[str]:
    """The images `config` needs, built on this machine (a local snakemake of the `images` rule in
    workdir), as refs to copy into the edge's engine: its own engine cannot reach a mirror."""
    host = socket.gethostname().split(".")[0]
    snakemake = Path(sys.executable).parent / "snakemake"
    subprocess.run(
        [str(snakemake), "-s", str(REPO_ROOT / "Snakefile"), "-d", str(workdir), "--cores", "1", "images",
         "--configfile", str(Path(config).resolve()), "--config", f"host={host}", f"run_on=[{host}]"],
        check=True,
    )  # fmt: skip
    records = sorted((workdir / "results" / "images" / host / "docker").glob("*.json"))
    return ["debian:bookworm-slim", *(json.loads(p.read_text())["ref"] for p in records)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("state", type=Path)
    ap.add_argument("--node", help="this machine's node name (default: its hostname)")
    ap.add_argument("--edge", action="store_true", help="add node `edge` (a container with its own engine)")
    ap.add_argument("--share", nargs="*", type=Path, default=[], help="working folders the edge must see")
    ap.add_argument(
        "--images-for",
        type=Path,
        help="a config whose images this machine builds and copies into the edge's engine",
    )
    a = ap.parse_args(argv)
    edge = EdgeNode(
        shared=a.share, preload=images_for(a.images_for, a.state / "images") if a.images_for else []
    )
    edge = edge if a.edge else None
    with LocalCluster(a.state, a.node, edge) as env:
        print(f"Slurm is up ({env['SLURM_CONF']}); Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
