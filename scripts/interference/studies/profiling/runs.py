"""The profiling study's columns of runs.tsv: what each run measured beside what."""

FIELDS = ("case", "target", "resource", "intensity", "partner", "window_s")


def run_row(meta: dict) -> dict:
    s = meta["settings"]
    return {k: s.get(k, "") for k in FIELDS}
