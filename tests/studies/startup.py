"""A tiny study kind, kept under tests/ to prove that a study is one drop-in module: the time
from starting N containers of the base image (each running `true`) to all of them having
exited. Copied into scripts/interference/studies/ by tests/test_new_study.py; nothing else
in the pipeline is edited."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from interference.descriptive import describe
from interference.runtimes import ContainerSpec
from interference.studies import RunKey, Study, Table

GROUP = ["host", "runtime", "instances", "metric"]


def _summary(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    samples = pd.read_csv(inputs["samples"], sep="\t", dtype=str, keep_default_na=False)
    return describe(samples, GROUP)


class StartupStudy(Study):
    name = "startup"
    title = "Start-to-exit time of N concurrent containers"
    key_pattern = r"n[0-9]+"
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "instances": {"type": "array", "items": {"type": "integer", "minimum": 1}, "default": [1]},
            "repetitions": {"type": "integer", "minimum": 1, "default": 2},
        },
    }
    tables = {"summary": Table(_summary)}

    def runs(self, cfg):
        return [RunKey(f"n{n}", r) for n in cfg["instances"] for r in range(1, cfg["repetitions"] + 1)]

    def settings(self, cfg, key):
        return {"instances": int(key[1:])}

    def execute(self, run):
        names = [run.name(f"c{i}") for i in range(run.settings["instances"])]
        t0 = time.time()
        for name in names:
            run.start(
                ContainerSpec(name=name, image=run.images["base"]["id"], command=["true"], labels=run.labels),
                "c",
            )
        codes = run.wait_all(names, t0 + 120)
        seconds = time.time() - t0
        failed = sum(code != 0 for code in codes.values())
        return {"seconds": seconds, "exit_codes": codes, "n_iterations": 1, "n_failed": int(failed > 0)}

    def parse(self, meta, raw_dir):
        s = meta["settings"]
        ok = meta["n_failed"] == 0
        row = {
            "host": s["host"],
            "runtime": s["runtime"],
            "instances": s["instances"],
            "repetition": s["repetition"],
            "metric": "seconds",
            "value": meta["seconds"] if ok else None,
            "unit": "s",
            "higher_is_better": False,
            "status": "ok" if ok else f"exit codes {meta['exit_codes']}",
        }
        return pd.DataFrame([row])
