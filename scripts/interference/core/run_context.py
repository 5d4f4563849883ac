"""What a study's execute() gets from the generic runner (interference.steps.runner): the runtime, the
raw folder, the images, and helpers that record what was started and what happened. Beneath
both the runner and the studies, so that neither imports the other for it."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from interference.core.labels import RUN_LABEL

if TYPE_CHECKING:  # annotations only
    from interference.host.telemetry import Sampler
    from interference.runtimes.base import ContainerSpec


class RunContext:
    """What a study's execute() gets: the runtime, the raw folder, the images and helpers that
    record what was started (for meta.json) and what happened (events)."""

    def __init__(self, settings: dict, outdir: Path, rt, images: dict):
        self.settings = settings
        self.outdir = outdir
        self.runtime = rt
        self.images = images  # image name -> {"ref", "id"}
        self.run_id = uuid.uuid4().hex[:12]
        self.labels = {RUN_LABEL: self.run_id}
        self.containers: list[dict] = []
        self.events: list[str] = []
        self.sampler: Sampler | None = None

    def name(self, suffix: str) -> str:
        """A name for something this run makes: unique, and tied to the run."""
        return f"interference-{self.run_id}-{suffix}"

    def start(self, spec: ContainerSpec, role: str) -> None:
        """Create spec's volumes, start it and record its command line and requested limits."""
        for volume, _ in spec.volumes:
            self.runtime.create_volume(volume, self.labels)
        self.containers.append(
            {
                "name": spec.name,
                "role": role,
                "argv": self.runtime.run_argv(spec),
                "limits_requested": spec.limits(),
                "image": spec.image,
            }
        )
        self.runtime.start(spec)
        if self.sampler:
            self.sampler.watch(spec.name)

    def wait_all(self, names: list[str], deadline: float, log_name: str = "containers.log") -> dict:
        """Wait for each until the deadline (a stuck one is recorded), then append their logs."""
        codes = {}
        for name in names:
            code = self.runtime.wait(name, deadline - time.time())
            if code is None:
                self.events.append(f"{name} still running at its deadline: killed")
            codes[name] = code
        with open(self.outdir / log_name, "a") as f:
            for name in names:
                f.write(f"==== {name} ====\n{self.runtime.logs(name)}\n")
        return codes
