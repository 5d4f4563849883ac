"""How often the verdict rules err, by simulation of the pair study's own design, where the truth
is known: samples drawn as this host gives them (runs of iterations, a run effect on top, the
baseline measured apart), through the real statistics (interference_ratios) and the real
findings code (cells, combinations, quantifiers). tests/test_verdict_calibration.py asserts
the rates; benchmarks/bench_verdicts.py prints the tables with more repetitions.

  coverage         how often the 95 % intervals of the cells, of their mean and of a contrast
                   of two cases hold the true value (with the shared baseline in the mean's SE,
                   and without it, as the rules had it)
  quantifier_error how often "every", "most" and "some" give a verdict the truth contradicts,
                   with every cell on the range's edge (the worst case for either error)
  settle_promises  how many of the findings a settle factor promises are decided by its runs
  edge_error       how often one cell is called reproduced with its true IR on the claim's edge,
                   tested on the log scale its interval was made on or on the IR's own"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from interference.findings import claims
from interference.findings.inference import RUNS, CellEstimate, linear, mean_of
from interference.findings.verdict import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Band, Measure
from interference.studies.pairs.findings.checks import ir_cell
from interference.studies.pairs.statistics import interference_ratios

COLUMNS = ["host", "runtime", "case", "target", "partner", "metric", "unit", "higher_is_better", "value",
           "status", "in_overlap", "repetition", "iteration"]  # fmt: skip


@dataclass(frozen=True)
class Design:
    """The default's design and this host's noise (variance_components.tsv of the default: an
    iteration CV of 7-10 %, a run share of about a fifth): iterations per run, Case 1's runs,
    each concurrent cell's runs, the relative SD of an iteration and of a run's effect (of the
    baseline's runs apart, where they differ)."""

    iterations: int = 5
    baseline_runs: int = 3
    runs: int = 2
    iteration_cv: float = 0.08
    run_cv: float = 0.04
    baseline_run_cv: float | None = None
    # Iterations of each concurrent run in turn where they differ (an adaptive window's: a
    # slowed member fits fewer); None: `iterations` each.
    concurrent_iterations: tuple[int, ...] | None = None
    # The baseline's iteration CV where it differs, and a Case 1u cell (runs, iteration CV, run
    # CV) beside it: measured here, Case 1's runs differ more than 1u's and its iterations less.
    baseline_iteration_cv: float | None = None
    unlimited: tuple[int, float, float] | None = None


# Alone cells that vary differently, as measured on this host (2026-11-29, run means' and
# iterations' SDs of the default's runs): Y (and L) in Case 1 vary 14 % between runs and 3 %
# within one, in 1u 4 % and 11 %; NR in Case 1 5-15 % and 7-15 %, in 1u 9-53 % and 10-41 % (where
# the scheduler puts its server). The default's runs: Case 1 and 1u three each (the drift
# check's run never enters the IR tables), each concurrent cell two, three iterations a run.
MEASURED_ALONE = {
    "Y": Design(iterations=3, baseline_runs=3, runs=2, iteration_cv=0.07, run_cv=0.07, baseline_run_cv=0.135,
                baseline_iteration_cv=0.03, unlimited=(3, 0.11, 0.04)),
    "NR": Design(iterations=3, baseline_runs=3, runs=2, iteration_cv=0.10, run_cv=0.08, baseline_run_cv=0.05,
                 baseline_iteration_cv=0.10, unlimited=(3, 0.25, 0.30)),
}  # fmt: skip


def samples(
    design: Design,
    true_irs: dict[tuple[str, str], float],
    rng,
    higher_is_better: bool = True,
    host: str = "h",
) -> pd.DataFrame:
    """Samples of one target (L) on `host` alone (Case 1) and beside partners: true_irs maps
    (case, partner) to the true IR (higher is better: mean = baseline × (1 + IR); lower is
    better, a time: baseline × (1 - IR))."""
    rows = []
    metric, unit = ("gflops", "GFLOPS") if higher_is_better else ("time", "s")

    def cell(case, partner, mean, runs, run_cv, iteration_cv=design.iteration_cv):
        for r in range(runs):
            effect = 1 + run_cv * rng.standard_normal()
            n = design.iterations
            if case not in ("1", "1u") and design.concurrent_iterations:
                n = design.concurrent_iterations[r % len(design.concurrent_iterations)]
            values = mean * effect * (1 + iteration_cv * rng.standard_normal(n))
            rows.extend((host, "docker", case, "L", partner, metric, unit, higher_is_better, x, "ok", True, r + 1,
                         i + 1) for i, x in enumerate(values))  # fmt: skip

    base_cv = design.run_cv if design.baseline_run_cv is None else design.baseline_run_cv
    base_it = design.iteration_cv if design.baseline_iteration_cv is None else design.baseline_iteration_cv
    cell("1", "", 50.0, design.baseline_runs, base_cv, base_it)
    if design.unlimited:  # its true IR is 0: the limit changes nothing here
        runs, iteration_cv, run_cv = design.unlimited
        cell("1u", "", 50.0, runs, run_cv, iteration_cv)
    sign = 1 if higher_is_better else -1
    for (case, partner), ir in true_irs.items():
        cell(case, partner, 50.0 * (1 + sign * ir), design.runs, design.run_cv)
    return pd.DataFrame(rows, columns=COLUMNS)


def reruns(design: Design, true_irs: dict, rng, reps: int, higher_is_better: bool = True):
    """The IR tables of `reps` simulated reruns, one per rerun. The reruns go through
    interference_ratios at once, each as its own host (it estimates each host apart), which
    spares its per-call cost; the draws are those of one call per rerun."""
    frames = [samples(design, true_irs, rng, higher_is_better, host=f"h{i}") for i in range(reps)]
    table = interference_ratios(pd.concat(frames, ignore_index=True))
    return [g for _, g in table.groupby("host", sort=False)]


def independent(c: CellEstimate) -> CellEstimate:
    """The cell as the old rules took it: its SE alone, sharing nothing."""
    return replace(c, se=c.sd, shared=(), own_df=c.df, group=None)


def coverage(design: Design, k: int, reps: int, seed: int, spread: float = 0.0) -> dict[str, float]:
    """Coverage of the 95 % intervals over `reps` simulated reruns with k partners in Cases 2 and
    3a (true IRs -20 % in Case 2, -10 % in 3a, spread apart by `spread` per partner)."""
    rng = np.random.default_rng(seed)
    truth = {}
    for j in range(k):
        shift = spread * (j - (k - 1) / 2) / max(1, k - 1)
        truth[("2", f"P{j}")] = -0.2 + shift
        truth[("3a", f"P{j}")] = -0.1 + shift
    hits = {"cell": 0, "mean": 0, "mean_independent": 0, "contrast": 0, "unlimited": 0}
    cells_seen = contrasts_seen = 0
    true_mean = float(np.mean([v for (case, _), v in truth.items() if case == "2"]))
    for table in reruns(design, truth, rng, reps):
        cells = {(r["case"], r["partner"]): ir_cell(r) for _, r in table.iterrows()}
        case2 = [cells[("2", f"P{j}")] for j in range(k)]
        for key, c in cells.items():
            if key[0] == "1u":  # the limit's effect, 0 here (Design.unlimited)
                hits["unlimited"] += c.low <= 0 <= c.high
                continue
            hits["cell"] += c.low <= truth[key] <= c.high
            cells_seen += 1
        m, mi = mean_of(case2), mean_of([independent(c) for c in case2])
        hits["mean"] += m.low <= true_mean <= m.high
        hits["mean_independent"] += mi.low <= true_mean <= mi.high
        for j in range(k):
            d = linear([cells[("3a", f"P{j}")], cells[("2", f"P{j}")]], [1, -1], "3a - 2")
            hits["contrast"] += d.low <= truth[("3a", f"P{j}")] - truth[("2", f"P{j}")] <= d.high
            contrasts_seen += 1
    out = {"cell": hits["cell"] / cells_seen, "mean": hits["mean"] / reps,
           "mean_independent": hits["mean_independent"] / reps, "contrast": hits["contrast"] / contrasts_seen}  # fmt: skip
    if design.unlimited:
        out["unlimited"] = hits["unlimited"] / reps
    return out


def _cell(rng, value: float, se: float, df: float, label: str) -> CellEstimate:
    """A cell as its statistics would give it: the estimate ~ value + se·N(0, 1), its SE
    estimated with df degrees of freedom."""
    est = value + se * rng.standard_normal()
    se_hat = se * math.sqrt(rng.chisquare(df) / df)
    return CellEstimate(label, est, est - 2 * se_hat, est + 2 * se_hat, se_hat, df, RUNS)


def quantifier_error(quantifier: str, n: int, side: str, reps: int, seed: int, df: float = 8.0) -> float:
    """How often the quantifier's verdict is wrong with every cell's true value on the range's
    edge: side "inside" puts the truth just inside (a refutation is wrong), "outside" just
    outside (a confirmation is wrong). The range is "below -5 %"; cells have SE 0.03."""
    rng = np.random.default_rng(seed)
    band, se = Band.of({"below": -0.05}), 0.03
    edge = -0.05
    wrong = 0
    for _ in range(reps):
        cells = tuple(_cell(rng, edge, se, df, f"c{i}") for i in range(n))
        m = Measure.of(mean_of(cells), "q", 10, cells=n, by_cell=cells)
        verdict = claims.judge_claim(m, band, quantifier).verdict
        wrong += verdict == (NOT_REPRODUCED if side == "inside" else REPRODUCED)
    return wrong / reps


def settle_promises(
    values, reps: int, seed: int, max_factor: float, se: float = 0.03, df: float = 8.0
) -> pd.DataFrame:
    """Per true value of one cell against the range "below -5 %": how often an inconclusive
    verdict promises a settle factor up to max_factor (steps/settle.py's MAX_FACTOR), and how
    many of those promises its runs keep (the runs made kept, the new ones added: the estimate
    pools both)."""
    rng = np.random.default_rng(seed)
    band = Band.of({"below": -0.05})
    rows = []
    for value in values:
        promised = kept = 0
        for _ in range(reps):
            first = _cell(rng, value, se, df, "c")
            j = claims.judge_claim(Measure.of(first, "q", 10), band, claims.MEAN)
            if j.verdict != INCONCLUSIVE or not 1 <= j.settle_factor <= max_factor:
                continue
            promised += 1
            f = j.settle_factor
            new = value + se / math.sqrt(f - 1) * rng.standard_normal() if f > 1 else first.estimate
            est = (first.estimate + (f - 1) * new) / f
            df_after = df * f
            se_after = se / math.sqrt(f) * math.sqrt(rng.chisquare(df_after) / df_after)
            after = CellEstimate("c", est, est - 2 * se_after, est + 2 * se_after, se_after, df_after, RUNS)
            kept += claims.judge_claim(Measure.of(after, "q", 10), band, claims.MEAN).verdict != INCONCLUSIVE
        rows.append({"value": value, "reps": reps, "promised": promised, "kept": kept,
                     "kept_share": kept / promised if promised else math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def edge_error(
    design: Design, edge: float, claim: str, higher_is_better: bool, reps: int, seed: int
) -> dict[str, float]:
    """One Case 3b cell whose true IR lies on the edge of the claim {claim: edge} ("below" or
    "above"), through the real statistics and verdict: how often it is called reproduced (wrong:
    the truth is not inside the open range), tested on the log scale its interval was made on
    (`log`, the rule) and with the same SE read symmetrically on the IR's scale (`symmetric`, the
    rule before 2026-11-29)."""
    rng = np.random.default_rng(seed)
    band = Band.of({claim: edge})
    wrong = {"log": 0, "symmetric": 0}
    for table in reruns(design, {("3b", "P"): edge}, rng, reps, higher_is_better):
        c = ir_cell(table.iloc[0])
        for name, cell in (("log", c), ("symmetric", replace(c, log_sign=0))):
            m = Measure.of(mean_of([cell]), "q", 10, by_cell=(cell,))
            wrong[name] += claims.judge_claim(m, band, claims.MEAN).verdict == REPRODUCED
    return {k: v / reps for k, v in wrong.items()}
