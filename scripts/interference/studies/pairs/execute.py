"""Run one (host, runtime, case, pair, repetition) and write its raw artifacts.

  results/raw/<host>/<runtime>/case<case>/<pair>/rep<n>/
      meta.json                     what ran, where, with which limits, and every iteration
      member<k>-<id>/iterNNNN.out   raw stdout of each iteration (.err: stderr)
      member<k>-<id>/iterations.tsv iteration, start, end, exit code (written in the container)
      member<k>-<id>/limits.txt     cgroup limits as read back inside the container
      containers.log                the containers' own output

Case 1 runs `iterations` fresh containers one after another. Cases 2/3 start both members
together and loop until the window closes. A failing or hanging benchmark becomes a failed
iteration in meta.json; only an unusable engine fails the job. Every container, network and
volume the run made is removed at the end, also on error or SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import json
import math
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

from interference import hostinfo, runtimes
from interference.studies.pairs.cases import image_for, limits_for, mark_overlap, members_of
from interference.locks import measurement_lock
from interference.microservices import registry
from interference.runtimes import ContainerSpec

RUN_LABEL = "interference.run"
START_MARGIN_S = 3.0  # time for all containers of a case to be created before they begin
WAIT_MARGIN_S = 30.0  # beyond the window and one iteration timeout, the run is stuck
RESULTS_IN_CONTAINER = "/results"


class Terminated(Exception):
    pass


def _terminate(signum, frame):
    raise Terminated(f"signal {signum}")


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
    ms_id: str, member_dir: str, first: int, start_at: float, mode: str, bound: float, timeout_s: float
) -> list[str]:
    return [
        "microservice-loop",
        ms_id,
        f"{RESULTS_IN_CONTAINER}/{member_dir}",
        str(first),
        f"{start_at:.3f}",
        mode,
        f"{bound:.3f}" if mode == "until" else str(int(bound)),
        f"{timeout_s:g}",
    ]


class CaseRun:
    def __init__(self, settings: dict, outdir: Path, rt=None):
        self.s = settings
        self.outdir = outdir
        self.rt = rt or runtimes.get(settings["runtime"])
        self.run_id = uuid.uuid4().hex[:12]
        self.labels = {RUN_LABEL: self.run_id}
        self.ms = registry()
        self.members = members_of(settings["pair"])
        self.images = settings["images"]  # image name -> {"ref", "id"}
        self.containers: list[dict] = []  # what was started, for meta.json
        self.events: list[str] = []

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
        return ["env", f"SERVER_HOST={self.servers[k]}"] if k in self.servers else []

    def spec(self, name: str, image: str, command: list[str], ids, limits: dict) -> ContainerSpec:
        volumes = [
            (self.volume_name(i, name), self.ms[i].scratch) for i in dict.fromkeys(ids) if self.ms[i].scratch
        ]
        return ContainerSpec(
            name=name,
            image=self.images[image]["id"],
            command=command,
            env=self.env_for(ids),
            cpuset=limits.get("cpuset"),
            cpus=limits.get("cpus"),
            memory=limits.get("memory"),
            binds=[(str(self.outdir), RESULTS_IN_CONTAINER)],
            volumes=volumes,
            network=self.network,
            labels=self.labels,
        )

    def volume_name(self, ms_id: str, container: str) -> str:
        return f"{container}-scratch-{ms_id.lower()}"

    def _start(self, spec: ContainerSpec, role: str) -> None:
        for volume, _ in spec.volumes:
            self.rt.create_volume(volume, self.labels)
        self.containers.append(
            {
                "name": spec.name,
                "role": role,
                "argv": self.rt.run_argv(spec),
                "limits_requested": spec.limits(),
                "image": spec.image,
            }
        )
        self.rt.start(spec)

    def _wait_all(self, names: list[str], deadline: float) -> dict:
        codes = {}
        for name in names:
            code = self.rt.wait(name, deadline - time.time())
            if code is None:
                self.events.append(
                    f"{name} still running {WAIT_MARGIN_S:.0f} s after its last possible iteration: killed"
                )
            codes[name] = code
        with open(self.outdir / "containers.log", "a") as f:
            for name in names:
                f.write(f"==== {name} ====\n{self.rt.logs(name)}\n")
        return codes

    # -- network servers (network microservices measure against a server container) -----
    def start_servers(self) -> None:
        """One server container per member that needs one (iperf3 serves one client at a
        time), outside the measured containers and unlimited, like the papers' netserver."""
        self.network = None
        self.servers: dict[int, str] = {}
        needing = [k for k, m in enumerate(self.members) if self.ms[m].server]
        if not needing:
            return
        self.network = f"interference-{self.run_id}"
        self.rt.create_network(self.network, self.labels)
        for k in needing:
            server = self.ms[self.members[k]].server
            name = f"interference-{self.run_id}-server{k + 1}"
            spec = ContainerSpec(
                name=name,
                image=self.images[self.members[k]]["id"],
                command=server["command"],
                cpuset=server.get("cpuset"),
                network=self.network,
                labels=self.labels,
            )
            self._start(spec, f"server for member{k + 1}")
            self.servers[k] = name
        time.sleep(max(self.ms[self.members[k]].server.get("ready_after_s", 1.0) for k in needing))

    # -- the cases ---------------------------------------------------------------------
    def run_case1(self) -> None:
        ms_id = self.members[0]
        limits = limits_for("1", 0, self.s["limits"])
        for it in range(1, self.s["iterations"] + 1):
            name = f"interference-{self.run_id}-{it:04d}"
            cmd = self.server_env(0) + loop_command(
                ms_id, self.member_dir(0), it, time.time(), "count", 1, self.s["iteration_timeout_s"]
            )
            self._start(self.spec(name, ms_id, cmd, [ms_id], limits), "member1")
            self._wait_all([name], time.time() + self.s["iteration_timeout_s"] + WAIT_MARGIN_S)
            self.rt.remove(name)  # the papers' `docker run --rm`: a fresh container each iteration

    def run_concurrent(self) -> None:
        case = self.s["case"]
        # Whole seconds: the loop driver in the container compares `date +%s` with them.
        start_at = float(math.ceil(time.time() + START_MARGIN_S))
        deadline = start_at + self.s["window_s"]
        timeout_s = self.s["iteration_timeout_s"]
        names = []
        if case == "2":
            loops = [
                " ".join(
                    self.server_env(k)
                    + loop_command(m, self.member_dir(k), 1, start_at, "until", deadline, timeout_s)
                )
                + " &"
                for k, m in enumerate(self.members)
            ]
            cmd = ["sh", "-c", " ".join(loops) + " wait"]
            name = f"interference-{self.run_id}-pair"
            image = image_for("2", self.members)[0]
            self._start(
                self.spec(name, image, cmd, self.members, limits_for("2", 0, self.s["limits"])),
                "member1+member2",
            )
            names.append(name)
        else:
            for k, m in enumerate(self.members):
                name = f"interference-{self.run_id}-member{k + 1}"
                cmd = self.server_env(k) + loop_command(
                    m, self.member_dir(k), 1, start_at, "until", deadline, timeout_s
                )
                self._start(
                    self.spec(name, m, cmd, [m], limits_for(case, k, self.s["limits"])), f"member{k + 1}"
                )
                names.append(name)
        if time.time() > start_at:
            self.events.append(
                "containers took longer than the start margin to create; "
                "samples before the overlap are marked"
            )
        self._wait_all(names, deadline + timeout_s + WAIT_MARGIN_S)

    # -- the whole run -----------------------------------------------------------------
    def execute(self) -> dict:
        if self.outdir.exists():  # a forced rerun replaces the old raw files of this run only
            shutil.rmtree(self.outdir)
        self.outdir.mkdir(parents=True)
        meta = {
            "settings": self.s,
            "run_id": self.run_id,
            "host_info": hostinfo.describe(),
            "runtime_info": self.rt.describe(),
            "started": time.time(),
        }
        try:
            self.start_servers()
            if self.s["case"] == "1":
                self.run_case1()
            else:
                self.run_concurrent()
        finally:
            meta["leftovers_removed"] = self.rt.remove_labelled(RUN_LABEL, self.run_id)
        meta["finished"] = time.time()
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
        if self.s["case"] == "1":
            for it in members[0]["iterations"]:
                it["in_overlap"] = True
            meta["overlap"] = None
        else:
            lo, hi = mark_overlap([m["iterations"] for m in members])
            meta["overlap"] = {"start": lo, "end": hi, "window_s": self.s["window_s"]}
        meta["members"] = members
        meta["containers"] = self.containers
        meta["events"] = self.events
        its = [it for m in members for it in m["iterations"]]
        meta["n_iterations"] = len(its)
        meta["n_failed"] = sum(it["status"] != "ok" for it in its)
        if self.s["case"] == "1":
            meta["n_failed"] += self.s["iterations"] - len(its)  # containers that never ran an iteration
        return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--settings", required=True, help="JSON: the run's slice of the config")
    ap.add_argument("--images", nargs="+", type=Path, required=True, help="image json files it uses")
    ap.add_argument(
        "--meta", type=Path, required=True, help="meta.json to write (its folder gets the raw files)"
    )
    a = ap.parse_args(argv)
    settings = json.loads(a.settings)
    settings["images"] = {}
    for p in a.images:
        d = json.loads(p.read_text())
        settings["images"][d["image"]] = {"ref": d["ref"], "id": d["id"]}
    signal.signal(signal.SIGTERM, _terminate)
    try:
        run = CaseRun(settings, a.meta.parent)
        run.rt.describe()  # fail with how-to-start before anything is made
    except runtimes.RuntimeUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with measurement_lock():
        print(
            f"run {run.run_id}: case {settings['case']} {settings['pair']} rep {settings['repetition']}",
            flush=True,
        )
        meta = run.execute()
    tmp = a.meta.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    tmp.rename(a.meta)  # meta.json appears only complete: an interrupted run leaves none
    print(
        f"{meta['n_iterations']} iterations, {meta['n_failed']} failed; removed {len(meta['leftovers_removed'])} "
        f"containers, networks or volumes at the end",
        flush=True,
    )
    for e in meta["events"]:
        print("event:", e, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
