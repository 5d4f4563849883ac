"""Run on a Slurm node before any job is submitted (slurm.check_nodes, through srun): the node
sees the submitting machine's working folder (a mark written there just before) and each runtime
its runs use answers. Prints what is wrong and exits 1; silent and 0 when all is well.

  python -m interference.steps.slurm_node_check --mark FILE --token TOKEN RUNTIME..."""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path

from interference import runtimes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mark", type=Path, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--options", type=json.loads, default={}, help="JSON: runtime_options of the config")
    ap.add_argument("runtimes", nargs="*")
    a = ap.parse_args(argv)
    here = socket.gethostname()
    try:
        seen = a.mark.read_text()
    except OSError:
        seen = None
    if seen != a.token:
        print(
            f"{here} does not see the working folder {a.mark.parent.parent} (shared with the "
            "submitting machine, at the same path, on every node)"
        )
        return 1
    problems = []
    for rt in a.runtimes:
        try:
            runtimes.get(rt, a.options.get(rt)).check()
        except runtimes.RuntimeUnavailable as error:
            problems.append(f"runtime {rt!r} does not answer on {here}: {error}")
    if problems:
        print("; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
