"""Paper 001's Experiments 2 and 3 (its Fig. 4 and Table I): the time to create N concurrent
entities that run a negligible sysbench (primes up to 1, one event) and exit.

  regular container, LXC   start → exit (then removal, timed apart)
  vm                       create and boot → exit → delete
  nested                   parent start, inner engine ready, child image loaded (or pre-loaded),
                           C children run → all exited (the paper's parent start-up to exit)

An entity is what a runtime makes for one container, with a fresh adapter each, so that on
`nested` each entity is a parent of its own (the paper's "nested container": parent + child).
Table I's parents × children: `children` > 1 runs on `nested` (the others run one child each). Both of the paper's child-image
variants run on nested (key suffix /load, /preloaded).

Run keys n<N>/c<C>[/<variant>]; statistics in statistics.py; the section in section.qmd."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd

from interference import runtimes
from interference.entity_memory import check_memory
from interference.microservices import registry
from interference.runtimes import ContainerSpec
from interference.studies.base import RunKey, Study, StudyConfigError, Table
from interference.studies.creation import findings, statistics

HERE = Path(__file__).parent
MICROSERVICE = "P"  # sysbench, run with a negligible workload
VARIANTS = {
    "load": {"child_image": "load"},
    "preloaded": {"child_image": "preloaded", "storage_driver": "vfs"},
}


class CreationStudy(Study):
    name = "creation"
    title = "Creation time of N concurrent entities, parents × children (paper 001, Fig. 4, Table I)"
    key_pattern = r"n[0-9]+/c[0-9]+(?:/load|/preloaded)?"
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "entities": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 256},
                "minItems": 1,
                "uniqueItems": True,
                "default": [1, 2, 4],
                "description": "N: entities created at once (paper: 1..64; on nested, parents)",
            },
            "children": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 256},
                "minItems": 1,
                "uniqueItems": True,
                "default": [1],
                "description": "children per nested parent (Table I: 1..256); > 1 on nested only",
            },
            "max_children": {
                "type": "integer",
                "minimum": 1,
                "default": 256,
                "description": "N × children at most (the paper: 256)",
            },
            "nested_child_image": {
                "type": "array",
                "items": {"enum": list(VARIANTS)},
                "minItems": 1,
                "uniqueItems": True,
                "default": ["load"],
                "description": "how a parent gets the child image: paper 001 measured both",
            },
            "repetitions": {"type": "integer", "minimum": 1, "default": 3},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 600},
        },
    }
    findings = findings.CHECKS
    tables = {"summary": Table(statistics.summary), "table1": Table(statistics.table1, needs=("summary",))}
    report_section = HERE / "section.qmd"

    def check(self, cfg: dict) -> None:
        rts = cfg["runtimes"]
        if "host" in rts:
            raise StudyConfigError(
                "studies.creation.runtimes: bare metal (host) creates no entity to time; leave `host` out "
                "(e.g. `runtimes: [docker, nested, vm]` under studies.creation)"
            )
        if max(cfg["children"]) > 1 and "nested" not in rts:
            raise StudyConfigError(
                f"studies.creation.children: {max(cfg['children'])} children per entity needs the nested "
                f"runtime (only a nested parent has children; the others run one each), not {rts}"
            )
        try:
            check_memory(rts, max(cfg["entities"]))
        except ValueError as e:
            raise StudyConfigError(f"studies.creation.entities: {e}") from None

    def runs(self, cfg):
        return [r for rt in cfg["runtimes"] for r in self.runs_on(cfg, rt)]

    def runs_on(self, cfg, runtime):
        nested = runtime == "nested"
        variants = [f"/{v}" for v in cfg["nested_child_image"]] if nested else [""]
        children = sorted(cfg["children"]) if nested else [1]  # one container is one child
        reps = range(1, cfg["repetitions"] + 1)
        return [
            RunKey(f"n{n}/c{c}{v}", r)
            for n in sorted(cfg["entities"])
            for c in children
            if n * c <= cfg["max_children"]
            for v in variants
            for r in reps
        ]

    def images(self, cfg):
        return [MICROSERVICE]

    def run_images(self, cfg, key):
        return [MICROSERVICE]

    def settings(self, cfg, key):
        parts = key.split("/")
        out = {"entities": int(parts[0][1:]), "children": int(parts[1][1:]), "timeout_s": cfg["timeout_s"]}
        if len(parts) == 3:
            out["child_image"] = parts[2]
        return out

    def code(self, step):
        return {
            "statistics": [HERE / "statistics.py"],
            "findings": [HERE / "findings.py"],
            "report": [HERE / "section.qmd", HERE / "section.py"],
        }.get(step, [HERE / "__init__.py"])

    def execute(self, run) -> dict:
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

    def parse(self, meta, raw_dir) -> pd.DataFrame:
        s = meta["settings"]
        rows = []
        for e in meta["entities"]:
            ok = e["status"] == "ok"
            for metric, key in (
                ("created_to_exit", "created_to_exit_s"),
                ("setup", "setup_s"),
                ("removed", "removed_s"),
            ):
                rows.append(
                    {
                        "host": s["host"],
                        "runtime": s["runtime"],
                        "variant": s.get("child_image", ""),
                        "entities": s["entities"],
                        "children": s["children"],
                        "repetition": s["repetition"],
                        "entity": e["entity"],
                        "metric": metric,
                        "value": e.get(key) if ok else None,
                        "unit": "s",
                        "higher_is_better": False,
                        "status": e["status"],
                    }
                )
        return pd.DataFrame(rows, columns=statistics.SAMPLE_COLUMNS)

    def run_row(self, meta):
        s = meta["settings"]
        return {"entities": s["entities"], "children": s["children"], "variant": s.get("child_image", "")}
