"""How often the verdict rules err, simulated on the pair study's design (the tables for the
docs and the issue's note; tests/test_verdict_calibration.py asserts the same rates on fewer
repetitions).

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_verdicts.py [--reps 2000]

Prints: the coverage of the 95 % intervals (each cell, the mean of k cells with and without
their shared baseline in its SE, a contrast of two cases) at k = 2, 3, 6, 9 on the default's
design and on one whose baseline runs vary less than the concurrent ones; the error rates of
"every", "most" and "some" with every cell on the range's edge; the settle factor's promises
kept per true value; how often one ratio cell on the claim's edge is called reproduced, tested
on the log scale its interval was made on and read symmetrically on the IR's (--edge-reps)."""

from __future__ import annotations

import argparse
import time

import pandas as pd
from interference.steps.settle import MAX_FACTOR
from interference.studies.pairs.findings import calibration as cal


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--edge-reps", type=int, default=1000, help="reruns per edge case (0: skip the table)")
    a = ap.parse_args(argv)
    start = time.monotonic()
    designs = [  # (name, design, how far apart the cells' true IRs are)
        ("default (iteration CV 8 %, run CV 4 %)", cal.Design(), 0.0),
        ("baseline run CV 2 %, concurrent 6 %", cal.Design(run_cv=0.06, baseline_run_cv=0.02), 0.0),
        ("cells 10 points apart", cal.Design(), 0.1),
        (
            "concurrent runs of 2 and 8 iterations, no run effect",
            cal.Design(run_cv=0.0, concurrent_iterations=(2, 8)),
            0.0,
        ),
        ("concurrent runs of 2 and 8 iterations, run CV 4 %", cal.Design(concurrent_iterations=(2, 8)), 0.0),
        *((f"Case 1 and 1u as {t}'s measured", d, 0.0) for t, d in cal.MEASURED_ALONE.items()),
    ]
    rows = []
    for name, design, spread in designs:
        for k in (2, 3, 6, 9):
            cov = cal.coverage(design, k, a.reps // 4, seed=100 + k, spread=spread)
            rows.append({"design": name, "cells": k, **{c: round(v, 3) for c, v in cov.items()}})
    pd.set_option("display.width", 200)
    print(f"Coverage of the 95 % intervals ({a.reps // 4} reruns each):")
    print(pd.DataFrame(rows).to_string(index=False))
    errors = []
    for quantifier, n, side in [("every", 6, "inside"), ("every", 18, "inside"), ("every", 6, "outside"),
                                ("some", 6, "outside"), ("some", 18, "outside"), ("some", 6, "inside"),
                                ("most", 6, "inside"), ("most", 6, "outside"), ("mean", 1, "inside"),
                                ("mean", 1, "outside")]:  # fmt: skip
        rate = cal.quantifier_error(quantifier, n, side, a.reps, seed=7)
        wrong = "not reproduced" if side == "inside" else "reproduced"
        errors.append({"quantifier": quantifier, "cells": n, "truth": f"just {side}", "wrong verdict": wrong,
                       "rate": round(rate, 4)})  # fmt: skip
    print(f"\nWrong verdicts with every cell on the edge ({a.reps} reruns each; nominal at most 5 %):")
    print(pd.DataFrame(errors).to_string(index=False))
    values = [-0.15, -0.13, -0.11, -0.09, -0.07, -0.06, -0.05, -0.04, -0.03, -0.01, 0.01]
    promises = cal.settle_promises(values, a.reps, seed=9, max_factor=MAX_FACTOR)
    print(f"\nSettle promises against the edge -5 % (SE 0.03, df 8; {a.reps} reruns each):")
    print(promises.to_string(index=False))
    kept = promises["kept"].sum() / max(1, promises["promised"].sum())
    print(f"all values: {promises['kept'].sum()} of {promises['promised'].sum()} promises kept ({kept:.1%})")
    if a.edge_reps:
        print_edge_errors(a.edge_reps)
    print(f"\n{time.monotonic() - start:.0f} s")


def print_edge_errors(reps: int) -> None:
    edges = []
    designs = [
        ("default", cal.Design()),
        ("iteration CV 15 %, run CV 8 %", cal.Design(iteration_cv=0.15, run_cv=0.08)),
    ]
    for name, design in designs:
        # A time's "above +30 %" is a rate's "below -30 %" mirrored: two cases cover both.
        for edge, claim, higher in [(-0.3, "below", True), (0.3, "above", True)]:
            rate = cal.edge_error(design, edge, claim, higher, reps, seed=1)
            edges.append({"design": name, "claim": f"{claim} {edge:+.0%}", "metric": "rate" if higher else "time",
                          "log scale (the rule)": rate["log"], "symmetric on the IR": rate["symmetric"]})  # fmt: skip
    print(
        f"\nOne Case 3b cell with its true IR on the claim's edge, called reproduced ({reps} reruns each; "
        "nominal at most 5 %):"
    )
    print(pd.DataFrame(edges).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
