"""The price of a verdict: how many runs a cell a pair-study finding needs for its rule to decide
it, so that a budget buys decisions rather than runs (steps/plan.py, config `decision_power`).

A finding whose paper gives the IRs of its cells (paper_values.published_cells) is priced as if
those were the true values here: its cells' runs (and its targets' baselines') are taken F times
the config's, for the least F of FACTORS at which the verdict rule reproduces it with probability
`decision_power` (findings.power). The noise of one run's mean is the variance components' (run
+ iteration / iterations, relative, the mean over a target's metrics): this host's own
(results/stats/pairs/variance_components.tsv, a target with at least MIN_DF_RUN degrees of freedom
between runs), each side of its IRs with its own components where both the baseline's and the
concurrent cells' rest on MIN_DF_RUN degrees of freedom, as the tables' intervals read them
(statistics.TargetComponents; on 2026-12-01 L's concurrent runs varied by 12.7 %, its Case 1
runs by 5.7 %), else the target's pooled ones for both; else the prior measured on this
project's reference VM (containers/noise-prior.tsv, pooled over its sessions by `python -m
interference.steps.verdict_price --pool TREE...`), one figure for both sides. A
finding without the paper's cells (a contrast, a check over every pair) has no price; one that
no factor up to the largest decides is priced at the config's runs and planned last. The price is
a power under the paper's values: where this host differs from the paper, `make settle` looks
again with the data."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from interference import REPO_ROOT
from interference.findings.power import Cells, p_reproduced
from interference.findings.verdict import Band
from interference.studies.pairs import cases

PRIOR = REPO_ROOT / "containers" / "noise-prior.tsv"
HOST_TABLE = Path("stats") / "pairs" / "variance_components.tsv"
FACTORS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
MIN_DF_RUN = 5


BASELINE_SIDE, CONCURRENT_SIDE = "baseline", "concurrent"


@dataclass(frozen=True)
class Noise:
    """Per target: the relative variance components of a run's mean (run, iteration) and where
    they come from; `sides`: (run, iteration) per (target, side) where each side has its own."""

    run: dict[str, float] = field(default_factory=dict)
    iteration: dict[str, float] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    sides: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)

    def of_run_mean(self, target: str, iterations: float, side: str | None = None) -> float | None:
        """The relative variance of one run's mean of `iterations` iterations: the side's own
        components where it has them, else the target's."""
        if (target, side) in self.sides:
            run, iteration = self.sides[(target, side)]
            return run + iteration / iterations
        if target not in self.run:
            return None
        return self.run[target] + self.iteration[target] / iterations


@dataclass(frozen=True)
class Price:
    factor: float  # the runs a cell as a multiple of the config's
    power: float  # the probability of "reproduced" at that factor
    decides: bool  # whether power reaches the target at some factor up to FACTORS[-1]
    power_at_one: float  # at the config's runs (where the price did not fit, it runs at them)


def _per_target(table: pd.DataFrame, source: str) -> Noise:
    g = table.groupby("target")
    run, it = g["run_var"].mean(), g["iteration_var"].mean()
    return Noise(run.to_dict(), it.to_dict(), {t: source for t in run.index})


def noise(results: Path, host: str, runtime: str = "docker", prior: Path = PRIOR) -> Noise:
    """This host's components where its own runs on the runtime measured them, else the prior's."""
    base = _per_target(pd.read_csv(prior, sep="\t", comment="#"), f"the prior ({prior.name})")
    own_path = results / HOST_TABLE
    if not own_path.exists():
        return base
    own = pd.read_csv(own_path, sep="\t")
    own = own[
        (own["host"] == host)
        & (own["runtime"] == runtime)
        & (pd.to_numeric(own["df_run"], errors="coerce") >= MIN_DF_RUN)
    ]
    own = own.dropna(subset=["run_var", "iteration_var"])
    if own.empty:
        return base
    mine = _per_target(own, "this host's runs")
    sides, source = _own_sides(own), dict(mine.source)
    for target, _ in sides:
        source[target] = "this host's runs, each side its own"
    return Noise(
        {**base.run, **mine.run}, {**base.iteration, **mine.iteration}, {**base.source, **source}, sides
    )


SIDE_COLUMNS = [
    f"{side}_{c}" for side in (BASELINE_SIDE, CONCURRENT_SIDE) for c in ("run_var", "iteration_var", "df_run")
]


def _own_sides(own: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float]]:
    """Each target's baseline and concurrent components (the mean over its metrics) where both
    rest on MIN_DF_RUN degrees of freedom between runs in every metric; a table written before
    the sides were has none."""
    if not set(SIDE_COLUMNS) <= set(own.columns):
        return {}
    out = {}
    for target, g in own.groupby("target"):
        g = g[SIDE_COLUMNS].apply(pd.to_numeric, errors="coerce")
        df = g[[f"{side}_df_run" for side in (BASELINE_SIDE, CONCURRENT_SIDE)]]
        if g.isna().any().any() or (df < MIN_DF_RUN).any().any():
            continue
        for side in (BASELINE_SIDE, CONCURRENT_SIDE):
            out[(target, side)] = (
                float(g[f"{side}_run_var"].mean()),
                float(g[f"{side}_iteration_var"].mean()),
            )
    return out


def sources(noise_: Noise) -> str:
    """Where each target's noise comes from, in words ("the prior (noise-prior.tsv) for B, L")."""
    by: dict[str, list[str]] = {}
    for target, source in sorted(noise_.source.items()):
        by.setdefault(source, []).append(target)
    return "; ".join(f"{source} for {', '.join(targets)}" for source, targets in by.items())


def pool(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Variance components pooled over sessions per target and metric: each component's mean
    weighted by its degrees of freedom (the pooled variance), the degrees of freedom summed."""
    t = pd.concat(tables, ignore_index=True)
    t = t.dropna(subset=["run_var", "iteration_var"])
    t = t[(t["df_run"] > 0) & (t["df_iteration"] > 0)]
    rows = []
    for (target, metric), g in t.groupby(["target", "metric"], sort=True):
        rows.append({
            "target": target, "metric": metric,
            "run_var": float(np.average(g["run_var"], weights=g["df_run"])),
            "iteration_var": float(np.average(g["iteration_var"], weights=g["df_iteration"])),
            "df_run": int(g["df_run"].sum()), "df_iteration": int(g["df_iteration"].sum()), "sessions": len(g),
        })  # fmt: skip
    return pd.DataFrame(rows)


def runs_at(pairs_cfg: dict, case: str, factor: float) -> int:
    return math.ceil(cases.repetitions(pairs_cfg, case) * factor - 1e-9)


def higher_share(target: str) -> float:
    """The share of a target's metrics where higher is better (its IR averages them)."""
    from interference.core.microservices import registry

    metrics = registry()[target].metrics
    return sum(m.higher_is_better for m in metrics) / len(metrics)


def cells_at(paper: pd.Series, pairs_cfg: dict, factor: float, noise_: Noise) -> Cells | None:
    """The finding's cells (the paper's IRs, indexed by case, target, partner) as the config
    would measure them at `factor` times its runs; None where a target has no noise figure."""
    targets = sorted({t for _, t, _ in paper.index})
    adaptive = pairs_cfg.get("adaptive") or {}
    k_alone = float(pairs_cfg.get("iterations", 1))
    # A concurrent run's samples of each member: at least min_overlap_samples where windows wait for them.
    k_cell = float(adaptive.get("min_overlap_samples", k_alone))
    if any(t not in noise_.run for t in targets):
        return None
    b = runs_at(pairs_cfg, "1", factor)
    index = {t: i for i, t in enumerate(targets)}
    target = np.array([index[t] for _, t, _ in paper.index])
    r = np.array([runs_at(pairs_cfg, case, factor) for case, _, _ in paper.index])
    mu = paper.to_numpy(float)
    up = np.array([higher_share(t) for _, t, _ in paper.index])
    rho = up * (1 + mu) + (1 - up) * (1 - mu)  # the tables' IR is 1 - x/b where lower is better
    var_cell = np.array([noise_.of_run_mean(t, k_cell, CONCURRENT_SIDE) for _, t, _ in paper.index]) / r
    var_base = np.array([noise_.of_run_mean(t, k_alone, BASELINE_SIDE) / b for t in targets])
    # Each side's variance estimate pools the target's runs of that kind (the tables pool every
    # cell of a target, so they have at least these): its concurrent cells here, and its Case 1
    # runs (not 1u's, whose runs vary differently: statistics.TargetComponents).
    df_cell = np.array([float(np.sum(r[target == i] - 1)) for i in range(len(targets))])
    df_base = np.full(len(targets), float(b - 1))
    return Cells(mu, rho, target, var_cell, var_base, df_cell, df_base)


def price(
    paper: pd.Series, band: Band, quantifier: str, pairs_cfg: dict, noise_: Noise, power: float
) -> Price | None:
    """The least factor of FACTORS at which the rule reproduces the paper's cells with the
    probability `power`; None where nothing prices it (no paper cells, no noise figure)."""
    if paper.empty:
        return None
    first = None
    for f in FACTORS:
        cells = cells_at(paper, pairs_cfg, f, noise_)
        if cells is None:
            return None
        p = p_reproduced(cells, band, quantifier)
        first = p if first is None else first
        if p >= power:
            return Price(f, p, True, first)
    return Price(1.0, first, False, first)


def extra_repetitions(part: dict, factor: float, pairs_cfg: dict, targets=None) -> dict[str, int]:
    """The extra runs of each cell a need's part reads ("case/pair": runs) that make its runs
    ceil(factor × the runs it has): the config's repetitions plus the extra runs it already has
    (pairs_cfg's extra_repetitions: the plan's, when settle asks). The alone cases per target
    (`targets`; None: every microservice of the part: only the targets' baselines enter an IR),
    the others per pair the config runs; only the cells whose runs grow."""
    ran = {tuple(sorted(g)) for g in cases.groups(pairs_cfg)}
    have = pairs_cfg.get("extra_repetitions") or {}
    alone = [m for m in part["microservices"] if targets is None or m in targets]
    out = {}
    for case in part.get("cases", []):
        if case not in pairs_cfg["cases"]:
            continue
        reps = cases.repetitions(pairs_cfg, case)
        if case in cases.ALONE_CASES:
            cells = [m for m in alone if m in pairs_cfg["microservices"]]
        else:
            cells = [p for p in part["pairs"] if tuple(sorted(cases.members_of(p))) in ran]
        for c in cells:
            key, made = f"{case}/{c}", have.get(f"{case}/{c}", 0)
            more = math.ceil((reps + made) * factor - 1e-9) - reps
            if more > made:
                out[key] = more
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Pool the variance components of results trees (the prior).")
    ap.add_argument("--pool", nargs="+", type=Path, required=True, help="results folders")
    a = ap.parse_args(argv)
    tables = [pd.read_csv(d / HOST_TABLE, sep="\t") for d in a.pool if (d / HOST_TABLE).exists()]
    if not tables:
        print("error: none of the folders has " + str(HOST_TABLE), file=sys.stderr)
        return 2
    pool(tables).to_csv(sys.stdout, sep="\t", index=False, float_format="%.6g")
    return 0


if __name__ == "__main__":
    sys.exit(main())
