"""The network study: one run on its runtime (Study.execute)."""

from __future__ import annotations

import contextlib
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
from interference.runtimes import ContainerSpec, ovs
from interference.studies.network import host_side, remote_side

SERVER_FILE = "server_host"  # the client entity reads the server's address from it
WAIT_MARGIN_S = 60.0


def execute(run) -> dict:
    s = run.settings
    ms = registry()[s["microservice"]]
    env = ms.container_env({"duration_s": s["duration_s"]})
    deadline = time.time() + s["iterations"] * s["iteration_timeout_s"] + WAIT_MARGIN_S
    server_argv = list(ms.server["command"])
    client_dir = run.outdir / "client"
    info = {"host_tools": host_side.versions(), "ovs": None}
    if "ovs" in s["mode"]:
        info["ovs"] = ovs.version()
    with host_side.Processes(run.outdir, deadline) as host, contextlib.ExitStack() as remote:
        if s["direction"] in ("to-host", "to-remote"):
            if s["direction"] == "to-host":
                host.start_server(server_argv, "server")
                server_at = None  # the host, as the entity reaches it
            else:
                server_at = remote.enter_context(
                    remote_side.RemoteServer(
                        s["remote_host"], server_argv, deadline - time.time(), run.outdir / "remote-server.log",
                        run.name("server"),
                    )
                )  # fmt: skip
            # The server's declared ready time passes while the client's entity starts.
            ready_at = time.time() + ms.server.get("ready_after_s", 1)
            # The client waits for the start file; the server's address is known only once the
            # entity is attached (a bridge's gateway, an OVS port), so it is read from a file.
            loop = loop_command(
                ms.id, "client", 1, RELEASED_BY_FILE, "count", s["iterations"], s["iteration_timeout_s"]
            )
            server_file = f"{RESULTS_IN_CONTAINER}/{SERVER_FILE}"
            wait = f"while [ ! -s {server_file} ]; do sleep 0.05; done; SERVER_HOST=$(cat {server_file})"
            spec = ContainerSpec(
                name=run.name("client"),
                image=run.images[ms.id]["id"],
                command=["sh", "-c", f'{wait} exec "$@"', "client", *loop],
                env=env,
                binds=[(str(run.outdir), RESULTS_IN_CONTAINER)],
                labels=run.labels,
                network_mode=s["mode"],
            )
            run.start(spec, "client")
            address = server_at or run.runtime.host_address(spec.name)
            (run.outdir / SERVER_FILE).write_text(address + "\n")
            time.sleep(max(0.0, ready_at - time.time()))
            start_at, _ = write_start_file(run.outdir)
            run.wait_all([spec.name], deadline)
        else:
            spec = ContainerSpec(
                name=run.name("server"),
                image=run.images[ms.id]["id"],
                command=server_argv,
                env=env,
                labels=run.labels,
                network_mode=s["mode"],
            )
            run.start(spec, "server")
            address = run.runtime.entity_address(spec.name)
            start_at = time.time()
            host.client_loop(
                ms, env | {"SERVER_HOST": address}, client_dir, s["iterations"], s["iteration_timeout_s"]
            )
            with open(run.outdir / "containers.log", "a") as f:
                f.write(f"==== {spec.name} ====\n{run.runtime.logs(spec.name)}\n")
    its = read_iterations(client_dir, s["iteration_timeout_s"])
    failed = sum(it["status"] != "ok" for it in its) + s["iterations"] - len(its)
    return {
        **info,
        "start_at": start_at,
        "server_address": address,
        "client_side": "host" if s["direction"] == "from-host" else "entity",
        "server_side": {
            "to-host": "host",
            "from-host": "entity",
            "to-remote": f"bare metal of {s.get('remote_host')}",
        }[s["direction"]],
        "limits_read_back": read_limits(client_dir / "limits.txt"),
        "iterations": its,
        "n_iterations": len(its),
        "n_failed": failed,
    }
