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

from pathlib import Path

from interference.core import entity_times
from interference.core.entity_memory import check_memory
from interference.core.table_schema import INTEGER, NUMBER, TEXT, TableSchema
from interference.stats.described import DESCRIBED
from interference.studies.base import KeyFormat, RunKey, Study, StudyConfigError, Table

HERE = Path(__file__).parent
MICROSERVICE = "P"  # sysbench, run with a negligible workload
VARIANTS = {
    "load": {"child_image": "load"},
    "preloaded": {"child_image": "preloaded", "storage_driver": "vfs"},
}


# The columns of its tables (validated when the statistics step writes them).
SUMMARY = TableSchema(
    TableSchema(host=TEXT, runtime=TEXT, variant=TEXT, entities=INTEGER, children=INTEGER, metric=TEXT),
    DESCRIBED,
)
# The paper's values are empty where it published none (the pre-loaded variant).
TABLE1 = TableSchema(
    host=TEXT,
    variant=TEXT,
    children=INTEGER,
    parents=INTEGER,
    n=INTEGER,
    mean_s=NUMBER,
    sd_s=NUMBER,
    published_mean_s=NUMBER,
    published_sd_s=NUMBER,
)


class CreationStudy(Study):
    name = "creation"
    title = "Creation time of N concurrent entities, parents × children (paper 001, Fig. 4, Table I)"
    # The nested runtime's variants add the child image: n2/c4/load.
    run_key = KeyFormat(
        "n{entities}/c{children}{variant}",
        entities=r"[0-9]+",
        children=r"[0-9]+",
        variant=r"(?:/load|/preloaded)?",
    )
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
    tables = {
        "summary": Table("statistics:summary", schema=SUMMARY),
        "table1": Table("statistics:table1", needs=("summary",), schema=TABLE1),
    }
    report_section = HERE / "section.qmd"

    def check(self, cfg: dict) -> None:
        rts = cfg["runtimes"]
        if "baremetal" in rts:
            raise StudyConfigError(
                "studies.creation.runtimes: bare metal (baremetal) creates no entity to time; leave `baremetal` out "
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
            RunKey(self.run_key.key(entities=n, children=c, variant=v), r)
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
        f = self.run_key.read(key)
        out = {"entities": int(f["entities"]), "children": int(f["children"]), "timeout_s": cfg["timeout_s"]}
        if f["variant"]:
            out["child_image"] = f["variant"].removeprefix("/")
        return out

    def finding_needs(self, check, args):
        """creation_ratio: the two entities' runtimes (a nested one's child-image variant);
        parents_over_children: nested parents loading the child image, one child and more."""
        if check == "parents_over_children":  # k parents of one child against one of k: k = 2
            return {
                "runtimes": ["nested"],
                "nested_child_image": ["load"],
                "entities": [1, 2],
                "children": [1, 2],
            }
        sides = [args["a"], args["b"]]  # one entity of each (findings.py: _pick)
        out = {"runtimes": list(dict.fromkeys(s["runtime"] for s in sides)), "entities": [1], "children": [1]}
        variants = [s["variant"] for s in sides if s["runtime"] == "nested" and "variant" in s]
        if variants:
            out["nested_child_image"] = list(dict.fromkeys(variants))
        return out

    def expected_seconds(self, settings):
        """The runtime's start-up, each parent (a nested one loading the child image if so),
        each nested child."""
        c, rt = entity_times.constants("creation"), settings["runtime"]
        n, children = settings["entities"], settings["children"]
        load = c["load_child_image_s"] if settings.get("child_image") == "load" else 0.0
        nested = n * children * c["child_s"] if rt == "nested" else 0.0
        return (
            entity_times.per_runtime("creation", "run_s", rt)
            + n * (entity_times.per_runtime("creation", "entity_s", rt) + load)
            + nested
        )

    def run_row(self, meta):
        s = meta["settings"]
        return {"entities": s["entities"], "children": s["children"], "variant": s.get("child_image", "")}
