"""Facilities of the host a run happens on: its description, its packages, a probe of its speed,
locks, cgroups, contention telemetry and its Slurm. They know nothing of studies or runtimes."""
