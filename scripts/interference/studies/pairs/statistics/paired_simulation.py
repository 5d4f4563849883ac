"""How the paired IR (paired.py) covers, against the unpaired one, on samples whose truth is known.

Samples are made in samples.tsv's shape and read by the real interference_ratios, so the whole
path is checked: phase labels, run ratios, pooling over partners, the unpaired IR beside it.
The host is the one issue 52 measured: each run has its own level (a per-run effect), each
iteration heavy-tailed noise (Student t with 3 df), and the partner's effect itself wanders a
little from run to run (a run x partner interaction). Case 1 runs are separate runs with their
own levels; a concurrent run's *without* phases share its level with its *with* phases."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from interference.studies.pairs.statistics import interference_ratios


@dataclass(frozen=True)
class Host:
    run_sd: float = 0.05  # the per-run effect on the log scale (a run share of about a quarter)
    iteration_sd: float = 0.09  # consecutive iterations' CV, heavy-tailed
    interaction_sd: float = 0.01  # how much the partner's effect itself varies between runs
    tail_df: float = 3.0


@dataclass(frozen=True)
class Design:
    runs: int = 3  # per concurrent cell
    baseline_runs: int = 3
    blocks: int = 2
    per_phase: int = 4  # iterations of a phase
    baseline_iterations: int = 3
    partners: tuple[str, ...] = ("S", "Y", "NS")


def _noise(rng, host: Host, n: int) -> np.ndarray:
    # t(df) scaled to the given SD
    return rng.standard_t(host.tail_df, n) * host.iteration_sd / np.sqrt(host.tail_df / (host.tail_df - 2))


def samples(effects: dict[str, float], host: Host, design: Design, rng) -> pd.DataFrame:
    """One study's samples of target L in Cases 1 and 3b, a true log effect per partner."""
    rows = []

    def add(case, partner, rep, values, phase, block):
        for i, v in enumerate(values):
            rows.append({"host": "sim", "runtime": "docker", "case": case, "target": "L", "partner": partner,
                         "repetition": rep, "member": 1, "iteration": i + 1, "metric": "gflops", "value": v,
                         "unit": "GFLOPS", "higher_is_better": True, "start": 0.0, "end": 1.0,
                         "in_overlap": phase in ("", "with"), "status": "ok", "phase": phase, "block": block})  # fmt: skip

    for rep in range(1, design.baseline_runs + 1):
        level = rng.normal(0, host.run_sd)
        add("1", "-", rep, 30 * np.exp(level + _noise(rng, host, design.baseline_iterations)), "", 0)
    for partner in design.partners:
        for rep in range(1, design.runs + 1):
            level = rng.normal(0, host.run_sd)
            effect = effects[partner] + rng.normal(0, host.interaction_sd)
            for block in range(1, design.blocks + 1):
                for phase, shift in (("with", effect), ("without", 0.0)):
                    add("3b", partner, rep, 30 * np.exp(level + shift + _noise(rng, host, design.per_phase)),
                        phase, block)  # fmt: skip
    return pd.DataFrame(rows)


def coverage(reps: int, seed: int = 1, host: Host = Host(), design: Design = Design()) -> dict:
    """Over `reps` simulated studies: the share of 95 % intervals that hold the true IR, and the
    median half-width (IR points), for the paired IR and the unpaired one beside it."""
    rng = np.random.default_rng(seed)
    truth = {p: np.log(1 + ir) for p, ir in zip(design.partners, (-0.2, -0.05, 0.0))}
    hit = {"paired": [], "unpaired": []}
    width = {"paired": [], "unpaired": []}
    for _ in range(reps):
        t = interference_ratios(samples(truth, host, design, rng), n_resamples=200)
        for _, r in t.iterrows():
            true_ir = np.exp(truth[r["partner"]]) - 1
            for name, lo, hi in (("paired", r["ir_ci_low"], r["ir_ci_high"]),
                                 ("unpaired", r["ir_unpaired_ci_low"], r["ir_unpaired_ci_high"])):  # fmt: skip
                hit[name].append(lo <= true_ir <= hi)
                width[name].append((hi - lo) / 2 * 100)
    return {name: {"coverage": float(np.mean(hit[name])), "median_half_width": float(np.median(width[name])),
                   "intervals": len(hit[name])} for name in hit}  # fmt: skip
