"""One run of the pair study: (host, runtime, case, pair, repetition) and its raw artifacts.

  results/raw/<host>/<runtime>/pairs/case<case>/<pair>/rep<n>/
      meta.json                     what ran, where, with which limits, and every iteration
      member<k>-<id>/iterNNNN.out   raw stdout of each iteration (.err: stderr)
      member<k>-<id>/iterations.tsv iteration, start, end, exit code (written in the container)
      member<k>-<id>/limits.txt     cgroup limits as read back inside the container
      containers.log                the containers' own output

Cases 1 and 1u run `iterations` fresh containers one after another (or, with an adaptive rule, on to
the precision asked for). Cases 2/3 start both members together and loop until the window closes
(which an adaptive rule may move later: adaptive.py), or, in the paired design, run in phases with
and without their partners (phases.py). A failing or hanging benchmark becomes a failed
iteration in meta.json; only an unusable engine fails the job. The generic runner
(interference.steps.runner) takes the lock, removes what the run made and writes meta.json."""

from __future__ import annotations

import time

from interference.core.loop import (
    HELD_BY_FILE,
    RELEASED_BY_FILE,
    RESULTS_IN_CONTAINER,
    loop_command,
    read_iterations,
    read_limits,
    release_time,
    wait_for_release,
    write_start_file,
)
from interference.core.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.pairs import adaptive, phases
from interference.studies.pairs.cases import ALONE_CASES, image_for, layout, limits_for, mark_overlap
from interference.studies.pairs.records import PairIteration, PairKey, PairMember, PairOverlap, PairResults

WAIT_MARGIN_S = 30.0  # beyond the window and one iteration timeout, the run is stuck


class CaseRun:
    """One pair run on the runner's RunContext (runtime, raw folder, images, records)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.s = ctx.settings
        self.outdir = ctx.outdir
        self.ms = registry()
        self.key = PairKey.from_settings(self.s)
        self.members = list(self.key.members)
        self.network = None
        self.servers: dict[int, str] = {}
        self.stopping: dict | None = None  # what an adaptive rule decided (config adaptive)
        self.schedule: dict | None = None  # the paired design's schedule, for meta.json (config phases)
        self.plan: list[phases.Phase] = []  # its phases

    # -- container specs -------------------------------------------------------------
    def member_dir(self, k: int) -> str:
        return f"member{k + 1}-{self.members[k]}"

    def env_for(self, ids) -> dict:
        env = {}
        for i in ids:
            env.update(self.ms[i].container_env(self.s["sizes"][i]))
        return env

    def phase_env(self, k: int) -> list[str]:
        """`env PHASES=... PHASE_MEMBER=k` for member k's loop in the paired design (phases.py)."""
        if not self.s.get("phases"):
            return []
        return ["env", f"PHASES={RESULTS_IN_CONTAINER}/{phases.PHASES_FILE}", f"PHASE_MEMBER={k + 1}"]

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
    def server_cpuset(self, k: int, server: dict) -> str | None:
        """Member k's cores when the case gives it cores and config network_server_cpus is
        `member` (a round trip between two vCPUs costs the hypervisor's interrupt); runs from
        before the key (no server_cpus in their settings) ran their servers on any core."""
        if self.s.get("server_cpus") == "member":
            return limits_for(self.key.case, k, self.s["limits"]).get("cpuset") or server.get("cpuset")
        return server.get("cpuset")

    def start_servers(self) -> None:
        """One server container per member that needs one (iperf3 serves one client at a
        time), outside the measured containers and without memory or CPU-time limits, like the
        papers' netserver;
        on its member's cores where server_cpuset says so."""
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
                cpuset=self.server_cpuset(k, server),
                network=self.network,
                labels=self.ctx.labels,
            )
            self.ctx.start(spec, f"server for member{k + 1}")
            self.servers[k] = spec.name
        time.sleep(max(self.ms[self.members[k]].server.get("ready_after_s", 1.0) for k in needing))

    # -- the cases ---------------------------------------------------------------------
    def run_case1(self) -> None:
        ms_id = self.members[0]
        limits = limits_for(self.key.case, 0, self.s["limits"])
        rule = self.s.get("adaptive")  # else exactly `iterations`
        last = rule["max_iterations"] if rule else self.s["iterations"]
        for it in range(1, last + 1):
            name = self.ctx.name(f"{it:04d}")
            start = HELD_BY_FILE if it == 1 and self.s.get("hold") else time.time()
            cmd = self.server_env(0) + loop_command(
                ms_id, self.member_dir(0), it, start, "count", 1, self.s["iteration_timeout_s"]
            )
            self.ctx.start(self.spec(name, ms_id, cmd, [ms_id], limits), "member1")
            self.ctx.wait_all([name], time.time() + self.s["iteration_timeout_s"] + WAIT_MARGIN_S)
            self.ctx.runtime.remove(name)  # the papers' `docker run --rm`: a fresh container each iteration
            if rule and it >= self.s["iterations"]:
                precision = adaptive.case1_precision(
                    self.outdir / self.member_dir(0), self.ms[ms_id], self.s["iteration_timeout_s"]
                )
                done = adaptive.case1_done(precision, rule["target_ci"])
                self.stopping = {
                    "rule": f"95 % CI of every metric's mean within +-{rule['target_ci']:g} of it, "
                    f"{self.s['iterations']} to {rule['max_iterations']} iterations",
                    "iterations_run": it,
                    "ci_half_width": precision,
                    "stopped_by": "precision reached" if done else "max_iterations",
                }
                if done:
                    break

    def run_concurrent(self) -> None:
        case = self.key.case
        timeout_s = self.s["iteration_timeout_s"]
        # The members wait for the start file; it is written once all of them run.
        start = RELEASED_BY_FILE
        names = []
        images = image_for(case, self.members)
        for container, image in zip(layout(case, len(self.members)), images):
            loops = [
                self.server_env(k)
                + self.phase_env(k)
                + loop_command(self.members[k], self.member_dir(k), 1, start, "until", 0, timeout_s)
                for k in container
            ]
            if len(container) == 1:
                name, cmd = self.ctx.name(f"member{container[0] + 1}"), loops[0]
            else:  # several loops in one container (Case 2; Case 2-3a's shared pair)
                name = self.ctx.name(
                    "pair" if len(container) == len(self.members) else f"shared{container[0] + 1}"
                )
                cmd = ["sh", "-c", " ".join(" ".join(loop) + " &" for loop in loops) + " wait"]
            ids = [self.members[k] for k in container]
            limits = limits_for(case, container[0], self.s["limits"])
            self.ctx.start(
                self.spec(name, image, cmd, ids, limits), "+".join(f"member{k + 1}" for k in container)
            )
            names.append(name)
        if self.s.get("hold") and not wait_for_release(self.outdir, timeout_s):
            self.ctx.events.append(f"held run not released within {timeout_s:g} s: went on")
        window_s = self.s["window_s"]
        if self.s.get("phases"):
            window_s = self.write_phases(start_at := release_time(), window_s)
            start_at, deadline = write_start_file(self.outdir, window_s, start_at)
        else:
            start_at, deadline = write_start_file(self.outdir, window_s)
        if self.s.get("adaptive"):
            dirs = [self.outdir / self.member_dir(k) for k in range(len(self.members))]
            self.stopping = adaptive.extend_window(
                self.outdir, dirs, start_at, deadline, self.s["adaptive"], timeout_s
            )
            deadline = self.stopping.pop("end")
        self.ctx.wait_all(names, deadline + timeout_s + WAIT_MARGIN_S)

    def write_phases(self, start_at: float, window_s: float) -> float:
        """The run's phase schedule, written before the loops are released; returns the window
        its whole blocks fill."""
        cfg = self.s["phases"]
        seed, n, switch = int(self.ctx.run_id, 16), len(self.members), cfg.get("switch", True)
        self.plan = phases.schedule(start_at, window_s, cfg["phase_s"], n, seed)
        phases.write(self.outdir, self.plan, switch)
        self.schedule = {"seed": seed, "switch": switch, "phase_s": cfg["phase_s"], "start": start_at,
                         "window_s": window_s, "n_members": n}  # fmt: skip
        return self.plan[-1].end - start_at

    def label_phases(self, loops: list[list[dict]]) -> None:
        """Each iteration's phase and block; only *with* iterations are the concurrent case's samples."""
        phases.label(loops, self.plan, self.schedule["switch"])
        for its in loops:
            for it in its:
                it["in_overlap"] = it["phase"] == phases.WITH

    # -- what meta.json gets -----------------------------------------------------------
    def results(self) -> dict:
        timeout_s = self.s["iteration_timeout_s"]
        loops = [
            read_iterations(self.outdir / self.member_dir(k), timeout_s) for k in range(len(self.members))
        ]
        overlap = None
        if self.key.case in ALONE_CASES:
            for it in loops[0]:
                it["in_overlap"] = True
        else:
            lo, hi = mark_overlap(loops)
            overlap = PairOverlap(lo, hi, self.s["window_s"])
            if self.schedule:
                self.label_phases(loops)
        members = tuple(
            PairMember(
                member=k + 1,
                microservice=m,
                dir=self.member_dir(k),
                limits_read_back=read_limits(self.outdir / self.member_dir(k) / "limits.txt"),
                iteration_records=tuple(
                    PairIteration.from_json(it, f"{self.member_dir(k)}/iterations.tsv") for it in loops[k]
                ),
            )
            for k, m in enumerate(self.members)
        )
        its = [it for m in members for it in m.iteration_records]
        n_failed = sum(it.status != "ok" for it in its)
        if self.key.case in ALONE_CASES:  # containers that never ran an iteration
            ran = self.stopping["iterations_run"] if self.stopping else self.s["iterations"]
            n_failed += ran - len(its)
        else:  # a member that never ran an iteration in the window failed as a whole
            silent = [m.microservice for m in members if not m.iteration_records]
            n_failed += len(silent)
            self.ctx.events += [f"member {m} ran no iteration in the window" for m in silent]
        return PairResults(members, overlap, self.stopping, len(its), n_failed, self.schedule).to_json()


def execute(ctx) -> dict:
    run = CaseRun(ctx)
    run.start_servers()
    if run.key.case in ALONE_CASES:
        run.run_case1()
    else:
        run.run_concurrent()
    return run.results()
