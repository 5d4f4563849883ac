"""The host's side of the network study: a server or a client loop as plain processes of the
host (Debian's iperf3 and sockperf installed on it, the same packages as in the images), in the
host's network namespace, with no cgroup limits, as the paper's bare-metal netserver/netperf.

The client loop runs the microservice's own `run` script (containers/<ms>/run) and writes the
files microservice-loop writes (iterations.tsv, iterNNNN.out/.err), so that one parser reads
both sides. Servers run under timeout(1) until the run's deadline: even a runner killed with
SIGKILL leaves none behind for long; on a normal end they are killed with their process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

TOOLS = ("iperf3", "sockperf")
NOT_READY_RETRIES = 12  # with the pauses below, about 9.5 s after the first attempt
FIRST_RETRY_S = 0.1
# The status of an iteration whose server never listened (ECONNREFUSED's number).
NOT_LISTENING_RC = 111


def versions() -> dict[str, str]:
    r = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *TOOLS],
        capture_output=True,
        text=True,
        check=False,
    )
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


class Processes:
    """Host processes of one run, all killed when the `with` block ends."""

    def __init__(self, outdir: Path, deadline: float):
        self.outdir = outdir
        self.deadline = deadline
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()

    def start_server(self, argv: list[str], name: str) -> None:
        lifetime = max(1, int(self.deadline - time.time()))
        with open(self.outdir / f"host-{name}.log", "w") as log:
            self.procs.append(
                subprocess.Popen(
                    ["timeout", str(lifetime), *argv],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )

    def client_loop(self, ms, env: dict, outdir: Path, iterations: int, timeout_s: float) -> None:
        """`iterations` runs of the microservice's run script, recorded as microservice-loop does.
        The first waits the server's declared ready time (it has just started). An attempt whose
        output says one of the microservice's not-ready messages (server.not_ready) measured
        nothing and is made again, up to NOT_READY_RETRIES times, after a pause that doubles from
        FIRST_RETRY_S up to the ready time, each refused attempt written to not_ready.log: a server
        in a guest may listen only seconds after its start, and iperf3 serves one test at a time,
        so a guest under TCG that has not reset since the last test refuses or says it is busy.
        Still refused after those, the iteration failed (NOT_LISTENING_RC where the client exited
        0 on the refusal, as iperf3 3.12's --json and sockperf do). Iterations follow each other
        at once otherwise: a fixed pause before each made a 1-second test last 2 seconds."""
        outdir.mkdir(parents=True, exist_ok=True)
        not_ready = ms.server.get("not_ready") or []
        not_ready = [not_ready] if isinstance(not_ready, str) else list(not_ready)
        ready_s = ms.server.get("ready_after_s", 1)
        time.sleep(ready_s)
        for i in range(1, iterations + 1):
            name = f"iter{i:04d}"
            for attempt in range(NOT_READY_RETRIES + 1):
                t0 = time.time()
                rc = self._client(ms, env, outdir / f"{name}.out", outdir / f"{name}.err", timeout_s)
                said = (outdir / f"{name}.out").read_text() + (outdir / f"{name}.err").read_text()
                refused = next((m for m in not_ready if m in said), None)
                if refused is None:
                    break
                last = attempt == NOT_READY_RETRIES
                with open(outdir / "not_ready.log", "a") as log:
                    end = "; given up" if last else ""
                    log.write(f"{name} attempt {attempt + 1}: the server was not ready ({refused!r}){end}\n")
                if last:
                    break
                time.sleep(min(ready_s, FIRST_RETRY_S * 2**attempt))
            if refused is not None and rc == 0:
                rc = NOT_LISTENING_RC
            with open(outdir / "iterations.tsv", "a") as f:
                f.write(f"{i}\t{t0:.6f}\t{time.time():.6f}\t{rc}\n")

    def _client(self, ms, env: dict, out_path: Path, err_path: Path, timeout_s: float) -> int:
        with open(out_path, "w") as out, open(err_path, "w") as err:
            p = subprocess.Popen(
                ["timeout", "--kill-after=5", f"{timeout_s:g}", str(ms.folder / "run")],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=os.environ | env,
                start_new_session=True,
            )
            self.procs.append(p)
            return p.wait()
