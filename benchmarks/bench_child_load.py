"""What images without apt's lists and caches save a nested run (containers/base/install-microservice).

Each round opens a run of the `nested` runtime (a parent with its own engine) and loads an image
of a microservice into it through the runtime's own `docker save | docker load`, timed by the
runtime (child_image_load_s): the image built before the clean-up and the one after, each into
a parent of its own, in a seeded random order. Prints each image's size, its mean load with a t
interval over the rounds, and the difference's paired t interval. Needs both images in the
host's engine (an image record of an older checkout keeps the old one); holds the measurement
lock.

  .venv/bin/python benchmarks/bench_child_load.py OLD_IMAGE NEW_IMAGE [--rounds 6] [--seed 1]"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.core.labels import RUN_LABEL
from interference.host.locks import measurement_lock
from interference.runtimes.nested import NestedRuntime


def interval(x: np.ndarray) -> str:
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return f"{x.mean():.2f} s [{x.mean() - half:.2f}, {x.mean() + half:.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    ids = {}
    for label, ref in (("old", a.old), ("new", a.new)):
        r = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Id}} {{.Size}}", ref],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise SystemExit(f"{ref}: no such image in the host's engine")
        ids[label], size = r.stdout.split()
        print(f"{label}: {ref} {int(size) / 1e6:.0f} MB")
    rng = random.Random(a.seed)
    times = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp, measurement_lock():
        for i in range(a.rounds):
            order = rng.sample(["old", "new"], 2)
            for k in order:  # a parent of its own for each: no layer of one is there for the other
                rt = NestedRuntime()
                try:
                    info = rt.open_run(Path(tmp), {RUN_LABEL: f"bench-load-{i}-{k}"}, {k: {"id": ids[k]}})
                finally:
                    rt.close_run()
                times[k].append(info["child_image_load_s"][k])
            print(f"round {i + 1}: " + ", ".join(f"{k} {times[k][-1]:.2f} s" for k in order))
    old, new = np.array(times["old"]), np.array(times["new"])
    print(
        f"old {interval(old)}; new {interval(new)}; saved per load {interval(old - new)} (t, {a.rounds} rounds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
