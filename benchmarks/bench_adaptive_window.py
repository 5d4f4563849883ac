"""How long the adaptive rule holds a concurrent window open (studies.pairs.adaptive:
min_overlap_samples, window_cap_s), and what a concurrent run costs with it.

  python benchmarks/bench_adaptive_window.py RESULTS [--runs 3] [--keys case2/L+L case3b/L+Y]

Prints, per concurrent run key of the pair study in the results tree RESULTS (a `make paper`
folder's results/): the window asked (window_s), the window it closed at, each member's
completed iterations inside the overlap at the close, the moves of its end and the run's wall
time, as medians over the tree's runs. With --runs N it then measures N runs of each key again
with this checkout's runner, from the tree's own settings and image records (the run rule's
command, into a temporary folder that is deleted), and prints the same for them beside the
tree's. Runs take the measurement lock, so no pipeline's run meets them. The default's keys at
its sizes take 8-20 s a run."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from interference import studies  # noqa: E402


def concurrent_metas(results: Path) -> dict[tuple[str, str, str], list[dict]]:
    """(host, runtime, key) -> the meta.json of each of its runs with an adaptive window."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for path in sorted(results.glob("raw/*/*/pairs/case*/*/rep*/meta.json")):
        meta = json.loads(path.read_text())
        if (meta.get("stopping") or {}).get("window_s") is None:
            continue
        s = meta["settings"]
        out.setdefault((s["host"], s["runtime"], s["key"]), []).append(meta)
    return out


def summary(metas: list[dict]) -> str:
    def med(values):
        return f"{statistics.median(values):.1f}"

    stops = [m["stopping"] for m in metas]
    counts = [min(s["counts_at_close"]) for s in stops]
    return (
        f"window {med([m['overlap']['window_s'] for m in metas])} s asked, closed at "
        f"{med([s['window_s'] for s in stops])} s; fewest samples at the close {med(counts)} "
        f"(asked {metas[0]['settings']['adaptive']['min_overlap_samples']}); moves "
        f"{med([len(s['moves']) for s in stops])}; run {med([m['finished'] - m['started'] for m in metas])} s "
        f"({len(metas)} runs)"
    )


def measure_again(results: Path, host: str, runtime: str, key: str, settings: dict, n: int) -> list[dict]:
    """n runs of the key with the runner of this checkout, as the run rule calls it."""
    names = studies.get("pairs").run_images({}, key)
    images = [str(results / "images" / host / runtime / f"{name}.json") for name in names]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(1, n + 1):
            meta = Path(tmp) / f"rep{rep}/meta.json"
            argv = [sys.executable, "-m", "interference.steps.runner", "--study", "pairs", "--settings",
                    json.dumps({**settings, "repetition": rep}), "--images", *images, "--meta", str(meta)]  # fmt: skip
            env = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}
            r = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"  {key} rep{rep} failed:\n{r.stdout[-1500:]}{r.stderr[-1500:]}", file=sys.stderr)
                continue
            out.append(json.loads(meta.read_text()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a results folder (…/results)")
    ap.add_argument("--runs", type=int, default=0, help="measure each key again this many times")
    ap.add_argument("--keys", nargs="*", help="only these run keys (e.g. case2/L+L)")
    args = ap.parse_args()
    found = concurrent_metas(args.results)
    if not found:
        sys.exit(f"{args.results}: no concurrent pair-study run with an adaptive window")
    for (host, runtime, key), metas in found.items():
        if args.keys and key not in args.keys:
            continue
        print(f"{host} {runtime} {key}\n  tree:  {summary(metas)}")
        if args.runs:
            again = measure_again(args.results, host, runtime, key, metas[0]["settings"], args.runs)
            print(f"  again: {summary(again)}" if again else "  again: no run succeeded")


if __name__ == "__main__":
    main()
