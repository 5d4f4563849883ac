"""A throwaway runtime adapter, kept under tests/ to prove that a runtime is its adapter and its
registry lines (an import and an entry): Docker's engine under another name, its containers started read-only. Copied
into scripts/interference/runtimes/ by tests/test_new_study.py, which adds its line to
runtimes/__init__.py; no study and no rule is edited."""

from __future__ import annotations

from interference.runtimes.docker import DockerRuntime


class ThrowawayRuntime(DockerRuntime):
    name = "throwaway"
    description = "Docker with read-only root filesystems (a test's plug-in)"
    report_order = 90

    run_args = (*DockerRuntime.run_args, "--read-only")
