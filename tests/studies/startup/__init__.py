"""A tiny study kind, kept under tests/ to prove that a study is one drop-in folder: the time
from starting N containers of the base image (each running `true`) to all of them having
exited. Copied into scripts/interference/studies/ by tests/test_new_study.py; nothing else
in the pipeline is edited. Its rooms: this declaration, execute.py, parse.py, statistics.py."""

from __future__ import annotations

from interference.studies import KeyFormat, RunKey, Study, Table


class StartupStudy(Study):
    name = "startup"
    title = "Start-to-exit time of N concurrent containers"
    run_key = KeyFormat("n{instances}", instances=r"[0-9]+")
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "instances": {"type": "array", "items": {"type": "integer", "minimum": 1}, "default": [1]},
            "repetitions": {"type": "integer", "minimum": 1, "default": 2},
        },
    }
    tables = {"summary": Table("statistics:summary")}

    def runs(self, cfg):
        return [
            RunKey(self.run_key.key(instances=n), r)
            for n in cfg["instances"]
            for r in range(1, cfg["repetitions"] + 1)
        ]

    def settings(self, cfg, key):
        return {"instances": int(self.run_key.read(key)["instances"])}
