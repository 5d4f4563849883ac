"""The creation study: one run on its runtime (Study.execute)."""

from __future__ import annotations

import threading
import time

from interference import runtimes
from interference.core.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.creation import MICROSERVICE, VARIANTS


def execute(run) -> dict:
    s = run.settings
    options = {**(s.get("runtime_options") or {}), **VARIANTS.get(s.get("child_image"), {})}
    image = run.images[MICROSERVICE]
    env = registry()[MICROSERVICE].container_env({"max_prime": 1, "events": 1})
    # What is done once and outside the timing (the paper's image already on the host):
    # e.g. the pre-loaded data root of a nested parent.
    prepared = runtimes.get(s["runtime"], options)
    prepared.check()
    prepared.prepare({MICROSERVICE: image})
    entities = [{"entity": k} for k in range(1, s["entities"] + 1)]
    go = threading.Barrier(len(entities))

    def create(e: dict) -> None:
        rt = runtimes.get(s["runtime"], options)  # an adapter per entity: nested, a parent each
        name = run.name(f"e{e['entity']}")
        go.wait()
        t0 = time.time()
        try:
            e["setup"] = rt.open_run(run.outdir, run.labels, {MICROSERVICE: image}, name=f"{name}-parent")
            t_setup = time.time()
            children = [f"{name}-c{c}" for c in range(1, s["children"] + 1)]
            for child in children:
                rt.start(ContainerSpec(name=child, image=image["id"], command=["/opt/microservices/P/run"],
                                       env=env, labels=run.labels))  # fmt: skip
            codes = [rt.wait(child, t0 + s["timeout_s"] - time.time()) for child in children]
            t_exit = time.time()
            e.update(
                exit_codes=codes,
                setup_s=t_setup - t0,
                created_to_exit_s=t_exit - t0,
                children_s=t_exit - t_setup,
            )
            for child in children:
                rt.remove(child)
            rt.close_run()  # nested: the parent goes too
            e["removed_s"] = time.time() - t0
            e["status"] = "ok" if all(c == 0 for c in codes) else f"exit codes {codes}"
        except Exception as error:  # recorded, not raised: the other entities still count
            e["status"] = f"failed: {error}"[:500]
        e["start"] = t0

    threads = [threading.Thread(target=create, args=(e,)) for e in entities]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = sum(e["status"] != "ok" for e in entities)
    if failed:
        run.events += [f"entity {e['entity']}: {e['status']}" for e in entities if e["status"] != "ok"]
    return {
        "entities": entities,
        "all_exited_s": max((e.get("created_to_exit_s", 0) for e in entities), default=0),
        "n_iterations": len(entities),
        "n_failed": failed,
        "runtime_options_used": options,
    }
