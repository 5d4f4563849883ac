"""One run of the pair study: (host, runtime, case, pair, repetition) and its raw artifacts.

  results/raw/<host>/<runtime>/pairs/case<case>/<pair>/rep<n>/
      meta.json                     what ran, where, with which limits, and every iteration
      member<k>-<id>/iterNNNN.out   raw stdout of each iteration (.err: stderr)
      member<k>-<id>/iterations.tsv iteration, start, end, exit code (written in the container)
      member<k>-<id>/limits.txt     cgroup limits as read back inside the container
      containers.log                the containers' own output

Case 1 runs `iterations` fresh containers one after another. Cases 2/3 start both members
together and loop until the window closes. A failing or hanging benchmark becomes a failed
iteration in meta.json; only an unusable engine fails the job. The generic runner
(interference.runner) takes the lock, removes what the run made and writes meta.json."""

from __future__ import annotations

import math
import time
from pathlib import Path

from interference.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.pairs.cases import image_for, limits_for, mark_overlap, members_of

START_MARGIN_S = 1.0  # from the last member's start to the window's: every loop is waiting by then
START_FILE = "start_at"
WAIT_MARGIN_S = 30.0  # beyond the window and one iteration timeout, the run is stuck
RESULTS_IN_CONTAINER = "/results"


def status_of(exit_code: int, seconds: float, timeout_s: float) -> str:
    if exit_code == 0:
        return "ok"
    # timeout(1) exits 124, or 137 when it had to KILL; 137 before the timeout is another
    # SIGKILL, usually the cgroup's out-of-memory killer.
    if exit_code == 124 or (exit_code == 137 and seconds >= timeout_s):
        return "timeout"
    if exit_code == 137:
        return "killed (exit 137, out of memory?)"
    return f"exit {exit_code}"


def read_limits(path: Path) -> dict:
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def read_iterations(member_dir: Path, timeout_s: float) -> list[dict]:
    path = member_dir / "iterations.tsv"
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            it, start, end, rc = line.split("\t")
            name = f"iter{int(it):04d}"
            t0, t1 = float(start), float(end)
            out.append(
                {
                    "iteration": int(it),
                    "start": t0,
                    "end": t1,
                    "exit_code": int(rc),
                    "status": status_of(int(rc), t1 - t0, timeout_s),
                    "stdout": f"{member_dir.name}/{name}.out",
                    "stderr": f"{member_dir.name}/{name}.err",
                }
            )
    return out


def loop_command(
    ms_id: str, member_dir: str, first: int, start: float | str, mode: str, bound: float, timeout_s: float
) -> list[str]:
    """microservice-loop's arguments; `start` is an epoch or "@file" (see the loop's header)."""
    return [
        "microservice-loop",
        ms_id,
        f"{RESULTS_IN_CONTAINER}/{member_dir}",
        str(first),
        start if isinstance(start, str) else f"{start:.3f}",
        mode,
        f"{bound:.3f}" if mode == "until" else str(int(bound)),
        f"{timeout_s:g}",
    ]


class CaseRun:
    """One pair run on the runner's RunContext (runtime, raw folder, images, records)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.s = ctx.settings
        self.outdir = ctx.outdir
        self.ms = registry()
        self.members = members_of(self.s["pair"])
        self.network = None
        self.servers: dict[int, str] = {}

    # -- container specs -------------------------------------------------------------
    def member_dir(self, k: int) -> str:
        return f"member{k + 1}-{self.members[k]}"

    def env_for(self, ids) -> dict:
        env = {}
        for i in ids:
            env.update(self.ms[i].container_env(self.s["sizes"][i]))
        return env

    def server_env(self, k: int) -> list[str]:
        """`env SERVER_HOST=...` for member k's loop when it measures against a server."""
        if k not in self.servers:
            return []
        return ["env", f"SERVER_HOST={self.ctx.runtime.address_of(self.servers[k])}"]

    def spec(self, name: str, image: str, command: list[str], ids, limits: dict) -> ContainerSpec:
        volumes = [
            (f"{name}-scratch-{i.lower()}", self.ms[i].scratch)
            for i in dict.fromkeys(ids)
            if self.ms[i].scratch
        ]
        return ContainerSpec(
            name=name,
            image=self.ctx.images[image]["id"],
            command=command,
            env=self.env_for(ids),
            cpuset=limits.get("cpuset"),
            cpus=limits.get("cpus"),
            memory=limits.get("memory"),
            binds=[(str(self.outdir), RESULTS_IN_CONTAINER)],
            volumes=volumes,
            network=self.network,
            labels=self.ctx.labels,
        )

    # -- network servers (network microservices measure against a server container) -----
    def start_servers(self) -> None:
        """One server container per member that needs one (iperf3 serves one client at a
        time), outside the measured containers and unlimited, like the papers' netserver."""
        needing = [k for k, m in enumerate(self.members) if self.ms[m].server]
        if not needing:
            return
        self.network = self.ctx.name("net")
        self.ctx.runtime.create_network(self.network, self.ctx.labels)
        for k in needing:
            server = self.ms[self.members[k]].server
            spec = ContainerSpec(
                name=self.ctx.name(f"server{k + 1}"),
                image=self.ctx.images[self.members[k]]["id"],
                command=server["command"],
                cpuset=server.get("cpuset"),
                network=self.network,
                labels=self.ctx.labels,
            )
            self.ctx.start(spec, f"server for member{k + 1}")
            self.servers[k] = spec.name
        time.sleep(max(self.ms[self.members[k]].server.get("ready_after_s", 1.0) for k in needing))

    # -- the cases ---------------------------------------------------------------------
    def run_case1(self) -> None:
        ms_id = self.members[0]
        limits = limits_for("1", 0, self.s["limits"])
        for it in range(1, self.s["iterations"] + 1):
            name = self.ctx.name(f"{it:04d}")
            cmd = self.server_env(0) + loop_command(
                ms_id, self.member_dir(0), it, time.time(), "count", 1, self.s["iteration_timeout_s"]
            )
            self.ctx.start(self.spec(name, ms_id, cmd, [ms_id], limits), "member1")
            self.ctx.wait_all([name], time.time() + self.s["iteration_timeout_s"] + WAIT_MARGIN_S)
            self.ctx.runtime.remove(name)  # the papers' `docker run --rm`: a fresh container each iteration

    def run_concurrent(self) -> None:
        case = self.s["case"]
        timeout_s = self.s["iteration_timeout_s"]
        # The members wait for this file; it is written once all of them run (write_start_file).
        start = f"@{RESULTS_IN_CONTAINER}/{START_FILE}"
        names = []
        if case == "2":
            loops = [
                " ".join(
                    self.server_env(k) + loop_command(m, self.member_dir(k), 1, start, "until", 0, timeout_s)
                )
                + " &"
                for k, m in enumerate(self.members)
            ]
            cmd = ["sh", "-c", " ".join(loops) + " wait"]
            name = self.ctx.name("pair")
            image = image_for("2", self.members)[0]
            self.ctx.start(
                self.spec(name, image, cmd, self.members, limits_for("2", 0, self.s["limits"])),
                "member1+member2",
            )
            names.append(name)
        else:
            for k, m in enumerate(self.members):
                name = self.ctx.name(f"member{k + 1}")
                cmd = self.server_env(k) + loop_command(
                    m, self.member_dir(k), 1, start, "until", 0, timeout_s
                )
                self.ctx.start(
                    self.spec(name, m, cmd, [m], limits_for(case, k, self.s["limits"])), f"member{k + 1}"
                )
                names.append(name)
        deadline = self.write_start_file()
        self.ctx.wait_all(names, deadline + timeout_s + WAIT_MARGIN_S)

    def write_start_file(self) -> float:
        """Start and end of the window, START_MARGIN_S after the last member started: however long
        a runtime takes to start them (a VM boots, a nested engine copies the image), the window
        is the same. Whole seconds: the loop compares `date +%s` with them."""
        start_at = float(math.ceil(time.time() + START_MARGIN_S))
        deadline = start_at + self.s["window_s"]
        tmp = self.outdir / f"{START_FILE}.tmp"
        tmp.write_text(f"{start_at:.0f} {deadline:.0f}\n")
        tmp.rename(self.outdir / START_FILE)  # appears whole
        return deadline

    # -- what meta.json gets -----------------------------------------------------------
    def results(self) -> dict:
        members = []
        for k, m in enumerate(self.members):
            d = self.outdir / self.member_dir(k)
            members.append(
                {
                    "member": k + 1,
                    "microservice": m,
                    "dir": d.name,
                    "limits_read_back": read_limits(d / "limits.txt"),
                    "iterations": read_iterations(d, self.s["iteration_timeout_s"]),
                }
            )
        out = {}
        if self.s["case"] == "1":
            for it in members[0]["iterations"]:
                it["in_overlap"] = True
            out["overlap"] = None
        else:
            lo, hi = mark_overlap([m["iterations"] for m in members])
            out["overlap"] = {"start": lo, "end": hi, "window_s": self.s["window_s"]}
        out["members"] = members
        its = [it for m in members for it in m["iterations"]]
        out["n_iterations"] = len(its)
        out["n_failed"] = sum(it["status"] != "ok" for it in its)
        if self.s["case"] == "1":
            out["n_failed"] += self.s["iterations"] - len(its)  # containers that never ran an iteration
        else:  # a member that never ran an iteration in the window failed as a whole
            silent = [m["microservice"] for m in members if not m["iterations"]]
            out["n_failed"] += len(silent)
            self.ctx.events += [f"member {m} ran no iteration in the window" for m in silent]
        return out


def execute(ctx) -> dict:
    run = CaseRun(ctx)
    run.start_servers()
    if run.s["case"] == "1":
        run.run_case1()
    else:
        run.run_concurrent()
    return run.results()
