"""The remote host's side of the network study (direction to-remote, paper 001's Experiment 5):
the server as a bare-metal process of another Slurm node, started there as a Slurm job of its own
(srun, --exclusive: nothing else runs on that node meanwhile) from the run's job, and killed with
that job. Its address is the node's address as Slurm knows it. The job has a time limit and the
server a timeout(1) lifetime: a runner killed with SIGKILL leaves neither for long."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path


class RemoteUnavailable(RuntimeError):
    pass


def node_address(node: str) -> str:
    r = subprocess.run(["scontrol", "-o", "show", "node", node], capture_output=True, text=True, timeout=30)
    fields = dict(f.split("=", 1) for f in r.stdout.split() if "=" in f)
    if r.returncode != 0 or not fields.get("NodeAddr"):
        raise RemoteUnavailable(f"Slurm knows no node {node!r} ({r.stderr.strip() or r.stdout.strip()})")
    return fields["NodeAddr"]


class RemoteServer:
    """`with RemoteServer(node, argv, lifetime_s, log, name) as address:` the server running there."""

    def __init__(self, node: str, argv: list[str], lifetime_s: float, log: Path, name: str):
        if shutil.which("srun") is None:
            raise RemoteUnavailable(
                f"a server on {node} is started through Slurm (srun), which is not installed here: "
                "run this study with --profile profiles/slurm"
            )
        self.node, self.argv, self.log, self.name = node, argv, log, name
        self.lifetime = max(1, int(lifetime_s))
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> str:
        address = node_address(self.node)
        minutes = math.ceil(self.lifetime / 60) + 1
        argv = ["srun", f"--nodelist={self.node}", "-N1", "-n1", "--exclusive", f"--job-name={self.name}",
                f"--time={minutes}", "--immediate=120", "timeout", str(self.lifetime), *self.argv]  # fmt: skip
        # SLURM_* of the run's own job would make srun a step of that job (on its node): a new job.
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") or k == "SLURM_CONF"}
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, env=env)  # fmt: skip
        self._wait_running()
        return address

    def _wait_running(self) -> None:
        deadline = time.time() + 150
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RemoteUnavailable(
                    f"the server on {self.node} ended at once: {self.log.read_text()[-500:]}"
                )
            if "RUNNING" in (self._job_states() or []):
                return
            time.sleep(0.2)
        raise RemoteUnavailable(f"the server job on {self.node} did not start within 150 s")

    def __exit__(self, *exc) -> None:
        # The job cancelled through Slurm, which ends every process of it on that node.
        subprocess.run(["scancel", "-n", self.name], capture_output=True)
        if self.proc and self.proc.poll() is None:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        # srun returns before the node has ended the job's processes (Slurm's KillWait): the run
        # is cleaned up, and may release the measurement lock, once the job is no longer listed.
        deadline = time.time() + 60
        while self._job_states() != [] and time.time() < deadline:
            time.sleep(0.5)

    def _job_states(self) -> list[str] | None:
        """The states Slurm lists for the server's job ([]: none; None: squeue did not answer)."""
        r = subprocess.run(["squeue", "-h", "-n", self.name, "-o", "%T"], capture_output=True, text=True)
        return r.stdout.split() if r.returncode == 0 else None
