"""One run of the profiling study on the runner's RunContext.

  results/raw/<host>/<runtime>/profiling/<case>/<target>/<beside>/rep<n>/
      meta.json          what ran, with which limits, and every iteration of each member
      target-<id>/       the measured member's loop files (iterNNNN.out|.err, iterations.tsv, limits.txt)
      bubble-X/          the bubble's (one iteration over the window), or partner-<id>/ the probe's partner
      containers.log     the containers' own output

Alone (Case 1 limited, 1u unlimited): `iterations` fresh containers one after another, as the pair
study's Case 1; under a quota (1q) likewise, and in the busy sweep (1k) with k containers spinning one
core each beside them all the while. Beside a bubble or a partner: both loops wait for the start file and run until the
window closes, in one container (placement 2) or two (3a, unlimited; 3b, each limited to cores of
its own as the pair study's Case 3b); the bubble's one iteration
lasts the window and a margin. Everything the run made carries the run's labels: the runner
removes it at the end, also on error."""

from __future__ import annotations

import os
import time

from interference.core.loop import (
    RELEASED_BY_FILE,
    RESULTS_IN_CONTAINER,
    loop_command,
    read_iterations,
    read_limits,
    write_start_file,
)
from interference.core.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.profiling.plan import (
    ALONE_CASES,
    BUBBLE,
    QUOTA_CASE,
    SWEEP_CASES,
    ProfilingRun,
    containers,
)

WAIT_MARGIN_S = 30.0  # beyond the window and one iteration timeout, the run is stuck


def limits_of(limits: dict, index: int = 0) -> dict:
    """The limits of a run's container `index` as the pair study's Case 1 (index 0) and Case 3b
    (0 and 1, disjoint cores): memory, and `cpus` cores of those this run may use, the index-th
    group of them (cpuset), or a quota of as many CPUs."""
    out = {"memory": limits["memory"]}
    if limits["cpu_mode"] == "cpuset":
        n = limits["cpus"]
        cores = sorted(os.sched_getaffinity(0))[index * n :][:n]
        if len(cores) < n:
            raise ValueError(f"container {index + 1} needs {n} cores of its own; this run may use fewer")
        out["cpuset"] = ",".join(map(str, cores))
    else:
        out["cpus"] = float(limits["cpus"])
    return out


def mark_in_window(target: list[dict], others: list[list[dict]]) -> tuple[float | None, float | None]:
    """Mark each target iteration in_overlap when it ran wholly while every other member was
    running (from the later first start to the earlier last end); the span, or None when a
    member ran nothing."""
    members = [target, *others]
    if not all(members):
        for it in target:
            it["in_overlap"] = False
        return None, None
    lo = max(min(i["start"] for i in its) for its in members)
    hi = min(max(i["end"] for i in its) for its in members)
    for it in target:
        it["in_overlap"] = lo <= it["start"] and it["end"] <= hi
    return lo, hi


class ProfilingRunner:
    def __init__(self, ctx):
        self.ctx, self.s = ctx, ctx.settings
        self.ms = registry()
        self.target = self.s["target"]
        self.other = BUBBLE if "intensity" in self.s else self.s.get("partner")
        self.network = None
        self.server_of: dict[str, str] = {}

    def role_dir(self, ms: str) -> str:
        if ms == self.target:
            return f"target-{ms}"
        return f"bubble-{ms}" if ms == BUBBLE else f"partner-{ms}"

    def spec(self, name: str, ids: list[str], command: list[str], limits: dict) -> ContainerSpec:
        env = {}
        for i in ids:
            env.update(self.ms[i].container_env(self.s["sizes"][i]))
        scratch = [(f"{name}-scratch-{i.lower()}", self.ms[i].scratch) for i in ids if self.ms[i].scratch]
        return ContainerSpec(
            name=name,
            image=self.ctx.images["+".join(ids)]["id"],
            command=command,
            env=env,
            cpuset=limits.get("cpuset"),
            cpus=limits.get("cpus"),
            memory=limits.get("memory"),
            binds=[(str(self.ctx.outdir), RESULTS_IN_CONTAINER)],
            volumes=scratch,
            network=self.network,
            labels=self.ctx.labels,
        )

    def container_limits(self, ids: list[str]) -> dict:
        """The limits of the run's container holding ids: Case 1's one container, or in placement
        3b each container cores of its own, the measured member's the first (as in its limited
        baseline, Case 1: a probe's pressure compares it on one core); else none."""
        return limits_of(self.s["limits"], 0 if self.target in ids else 1) if "limits" in self.s else {}

    def server_cpuset(self, ms: str, server: dict) -> str | None:
        """The cores of ms's container where it is limited to cores and config
        network_server_cpus is `member` (a round trip between two vCPUs costs the hypervisor's
        interrupt: the pair study's key); else any core, as runs before the key."""
        if self.s.get("server_cpus") != "member":
            return server.get("cpuset")
        ids = next(ids for ids in containers(self.run_key()) if ms in ids)
        return self.container_limits(ids).get("cpuset") or server.get("cpuset")

    def start_servers(self) -> None:
        """A server container, outside the measured ones and without memory or CPU-time limits,
        for each network microservice of the run (as the pair study's); on its cores where
        server_cpuset says so."""
        needing = [m for m in dict.fromkeys([self.target, self.other]) if m and self.ms[m].server]
        if not needing:
            return
        self.network = self.ctx.name("net")
        self.ctx.runtime.create_network(self.network, self.ctx.labels)
        for m in needing:
            server = self.ms[m].server
            spec = ContainerSpec(
                name=self.ctx.name(f"server-{m.lower()}"),
                image=self.ctx.images[m]["id"],
                command=server["command"],
                cpuset=self.server_cpuset(m, server),
                network=self.network,
                labels=self.ctx.labels,
            )
            self.ctx.start(spec, f"server for {m}")
            self.server_of[m] = spec.name
        time.sleep(max(self.ms[m].server.get("ready_after_s", 1.0) for m in needing))

    def loop(self, ms: str, first: int, start, mode: str, bound: float) -> list[str]:
        server = self.server_of.get(ms)
        env = ["env", f"SERVER_HOST={self.ctx.runtime.address_of(server)}"] if server else []
        timeout_s = self.s["iteration_timeout_s"]
        return env + loop_command(ms, self.role_dir(ms), first, start, mode, bound, timeout_s)

    def run_alone(self) -> None:
        limits = self.container_limits([self.target])  # Case 1's; none unlimited
        if self.s["case"] == QUOTA_CASE:  # a CFS quota only: every core allowed, memory unlimited
            limits = {"cpus": float(self.s["quota"])}
        self.start_spinners()
        for it in range(1, self.s["iterations"] + 1):
            name = self.ctx.name(f"{it:04d}")
            cmd = self.loop(self.target, it, time.time(), "count", 1)
            self.ctx.start(self.spec(name, [self.target], cmd, limits), "target")
            self.ctx.wait_all([name], time.time() + self.s["iteration_timeout_s"] + WAIT_MARGIN_S)
            self.ctx.runtime.remove(name)  # a fresh container each iteration, as the pair study's Case 1

    def start_spinners(self) -> None:
        """The busy sweep's neighbours: containers each spinning one core (the bubble at cpu 1),
        unlimited, from before the first iteration to the run's end (the runner removes them)."""
        for k in range(self.s.get("busy", 0)):
            name = self.ctx.name(f"busy{k + 1}")
            self.ctx.start(
                self.spec(name, [BUBBLE], ["/opt/microservices/X/run"], {}), f"busy neighbour {k + 1}"
            )
        if self.s.get("busy"):
            time.sleep(1.0)  # every spinner at full speed before the first iteration

    def run_beside(self) -> None:
        names = []
        for k, ids in enumerate(containers(self.run_key())):
            loops = [self.loop(m, 1, RELEASED_BY_FILE, "until", 0) for m in ids]
            # Placement 2: both loops in one container, each in the background.
            cmd = (
                ["sh", "-c", " & ".join(" ".join(a) for a in loops) + " & wait"] if len(ids) > 1 else loops[0]
            )
            name = self.ctx.name(f"c{k + 1}")
            limits = self.container_limits(ids)  # placement 3b's; 2 and 3a unlimited
            self.ctx.start(self.spec(name, ids, cmd, limits), "+".join(self.role_dir(m) for m in ids))
            names.append(name)
        _, deadline = write_start_file(self.ctx.outdir, self.s["window_s"])
        bubble_s = self.s["sizes"].get(BUBBLE, {}).get("seconds", 0)
        self.ctx.wait_all(names, deadline + bubble_s + self.s["iteration_timeout_s"] + WAIT_MARGIN_S)

    def run_key(self) -> ProfilingRun:
        s = self.s
        return ProfilingRun(
            s["case"], self.target, s.get("resource"), s.get("intensity"), s.get("partner"), s.get("quota")
        )

    def results(self) -> dict:
        timeout_s = self.s["iteration_timeout_s"]
        ids = [self.target] + ([self.other] if self.other else [])
        loops = {m: read_iterations(self.ctx.outdir / self.role_dir(m), timeout_s) for m in ids}
        window = None
        if self.other:
            window = mark_in_window(loops[self.target], [loops[self.other]])
        else:
            for it in loops[self.target]:
                it["in_overlap"] = True
        members = [
            {
                "role": self.role_dir(m).split("-")[0],
                "microservice": m,
                "dir": self.role_dir(m),
                "limits_read_back": read_limits(self.ctx.outdir / self.role_dir(m) / "limits.txt"),
                "iterations": loops[m],
            }
            for m in ids
        ]
        its = loops[self.target]
        n_failed = sum(it["status"] != "ok" for it in its)
        if "iterations" in self.s:  # containers that never ran their iteration
            n_failed += self.s["iterations"] - len(its)
        silent = [m for m in ids if not loops[m]]
        if self.other:  # a member that never ran in the window failed as a whole
            n_failed += len(silent)
        self.ctx.events += [f"{self.role_dir(m)} ran no iteration" for m in silent]
        return {"members": members, "window": window, "n_iterations": len(its), "n_failed": n_failed}


def execute(ctx) -> dict:
    run = ProfilingRunner(ctx)
    run.start_servers()
    if ctx.settings["case"] in (*ALONE_CASES, *SWEEP_CASES):
        run.run_alone()
    else:
        run.run_beside()
    return run.results()
