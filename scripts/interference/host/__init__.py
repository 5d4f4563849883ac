"""Facilities of the host a run happens on: its description, its packages, a probe of its speed,
locks, cgroups, contention telemetry, its Slurm, and its links and network namespaces (netlink).
They know nothing of studies or runtimes."""
