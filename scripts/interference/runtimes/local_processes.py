"""What the runtimes without an engine daemon share (bare metal, Apptainer): the commands they
start are child processes of the runner, recorded in a state folder with the run's labels, so
that everything of a run is found and removed even by another process after a crash; volumes
are directories; logs are files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from interference.runtimes.base import LOOPBACK, ContainerRuntime, ContainerSpec


class LocalProcessRuntime(ContainerRuntime):
    def __init__(self, state_dir: str, **options):
        super().__init__(**options)
        self.state_dir = Path(state_dir)
        self.procs: dict[str, subprocess.Popen] = {}

    def _command_file(self, name: str, suffix: str) -> Path:
        return self.state_dir / "commands" / f"{name}{suffix}"

    def _volume_dir(self, name: str) -> Path:
        return self.state_dir / "volumes" / name

    def _launch(self, spec: ContainerSpec, record: dict, **popen) -> subprocess.Popen:
        """Start run_argv(spec) with its output in a log file, recorded with the spec's labels."""
        self._command_file(spec.name, "").parent.mkdir(parents=True, exist_ok=True)
        with open(self._command_file(spec.name, ".log"), "w") as log:
            proc = subprocess.Popen(
                self.run_argv(spec), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **popen
            )
        self.procs[spec.name] = proc
        self._command_file(spec.name, ".json").write_text(
            json.dumps({"labels": spec.labels, **record, "pid": proc.pid})
        )
        return proc

    def entity_pid(self, name: str) -> int | None:
        """The launched process: it joined the entity's cgroups before it ran anything."""
        proc = self.procs.get(name)
        return proc.pid if proc else None

    def _record(self, name: str) -> dict:
        path = self._command_file(name, ".json")
        return json.loads(path.read_text()) if path.exists() else {}

    def _forget(self, name: str) -> None:
        if name in self.procs:
            self.procs.pop(name).wait()
        for suffix in (".json", ".log"):
            self._command_file(name, suffix).unlink(missing_ok=True)

    def wait(self, name: str, timeout_s: float) -> int | None:
        try:
            return self.procs[name].wait(timeout=max(timeout_s, 1))
        except subprocess.TimeoutExpired:
            return None

    def logs(self, name: str) -> str:
        path = self._command_file(name, ".log")
        return path.read_text(errors="replace") if path.exists() else ""

    def _labelled(self, kind: str, label: str, value: str) -> list[str]:
        folder = self.state_dir / kind
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
        return [p.stem for p in paths if json.loads(p.read_text())["labels"].get(label) == value]

    def remove_labelled(self, label: str, value: str) -> list[str]:
        removed = []
        for name in self._labelled("commands", label, value):
            self.remove(name)
            removed.append(f"command {name}")
        for name in self._labelled("volumes", label, value):
            shutil.rmtree(self._volume_dir(name), ignore_errors=True)
            (self.state_dir / "volumes" / f"{name}.json").unlink()
            removed.append(f"volume {name}")
        return removed

    def create_volume(self, name: str, labels: dict) -> None:
        self._volume_dir(name).mkdir(parents=True)
        (self.state_dir / "volumes" / f"{name}.json").write_text(json.dumps({"labels": labels}))

    def address_of(self, name: str) -> str:
        return LOOPBACK  # the host's network namespace
