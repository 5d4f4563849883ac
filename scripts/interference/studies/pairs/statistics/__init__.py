"""Statistics of the tidy samples: summary, interference ratios (IR), ANOVA and Tukey HSD.

Only samples with status "ok", a value and in_overlap True count; every other sample is
counted in n_excluded_failed or n_excluded_overlap of its group. Case "1" (the target alone in
a limited container) is the baseline of every concurrent case (2, 3a, 3b; a triple's 2-3a) of
the same host, runtime, target and metric. The ANOVA and Tukey tests keep to the papers' design
(pairs in Cases 1, 2, 3a and 3b: hypothesis_tests.pairs_only). A statistic that cannot be
computed is left empty and the row says why (note / reason): never a crash, never an unexplained
NaN.

ANOVA and Tukey HSD are in hypothesis_tests.py, the runtime comparison in runtime_ratios.py, the
paired design's ratios in paired.py. The statistics rule computes every table of the study in one
process (python -m interference.steps.statistics --study pairs); the pair study's `tables`
(studies/pairs/__init__.py) maps each table's name to its function in tables.py."""

from __future__ import annotations

import logging
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import CONFIDENCE, describe, prepare
from interference.stats.descriptive import join as _join
from interference.stats.descriptive import valid as _valid
from interference.stats.resampling import relative_change, relative_change_ci
from interference.stats.variance_components import Components, nested, ratio_interval, runs_of
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import BASELINE, CONCURRENT_CASES, END, UNLIMITED
from interference.studies.pairs.statistics import paired

GROUP = schemas.GROUP.columns
# One ANOVA / one Tukey family per host, runtime, target and metric.
FAMILY = schemas.FAMILY.columns
ALPHA = 1 - CONFIDENCE
N_RESAMPLES = 2000
SEED = 20240601
# Below this many samples on a side a bootstrap interval tends to be too narrow: said in reason.
SMALL_N = 10
# Sums of squares below this fraction of the data's scale are rounding noise, not variance:
# a ratio of two noises would be a meaningless (often huge) F.
REL_TOL = 1e-12

# Each table's columns are declared, with their kinds, in ../schemas.py (validated when written).
SUMMARY_COLUMNS = schemas.SUMMARY.columns
INTERFERENCE_COLUMNS = schemas.INTERFERENCE.columns
ANOVA_COLUMNS = schemas.ANOVA.columns
POSTHOC_COLUMNS = schemas.POSTHOC.columns
# The number columns of each output, for readers of these files (the report).
NUMERIC_COLUMNS = {
    name: schema.numeric
    for name, schema in [
        ("summary", schemas.SUMMARY),
        ("interference", schemas.INTERFERENCE),
        ("anova", schemas.ANOVA),
        ("posthoc", schemas.POSTHOC),
    ]
}
TERM_NAMES = {"C(case)": "case", "C(partner)": "partner", "C(case):C(partner)": "case:partner"}

log = logging.getLogger("statistics")


# ---------------------------------------------------------------------------------------------
# Input


def read_samples(path: Path) -> pd.DataFrame:
    """samples.tsv as written by parse_run: ids stay strings ("NA" is no missing value)."""
    text = {c: str for c in ["host", "runtime", "case", "target", "partner", "metric", "unit", "status"]}
    return pd.read_csv(
        path,
        sep="\t",
        dtype=text,
        keep_default_na=False,
        na_values={"value": [""], "start": [""], "end": [""]},
    )


def _prepare(samples: pd.DataFrame) -> pd.DataFrame:
    df = prepare(samples, GROUP)
    if "repetition" not in df:  # samples written without it are of one run
        df["repetition"] = 1
    if "phase" not in df:  # written before the paired design (phases.py)
        df["phase"], df["block"] = "", 0
    df["phase"] = df["phase"].fillna("").astype(str)
    return df


def _map(fn, tasks: list, jobs: int) -> list:
    """fn over tasks, in order; in `jobs` processes when there is enough work to share."""
    if jobs <= 1 or len(tasks) < 2:
        return [fn(*t) for t in tasks]
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        return list(pool.map(fn, *zip(*tasks), chunksize=max(1, len(tasks) // (4 * jobs))))


# ---------------------------------------------------------------------------------------------
# Summary


def summarize(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per host, runtime, case, target, partner, metric (see SUMMARY_COLUMNS)."""
    return describe(samples, GROUP)


# ---------------------------------------------------------------------------------------------
# Interference ratio


# The IR is the shared relative change (stats/resampling.py): the drift check and the comparison
# with saved sessions use the same statistic and interval.
ir_value = relative_change
# Which levels an IR's interval covers (the column ci_level).
RUNS_LEVEL = "runs and iterations"
ITERATIONS_LEVEL = "iterations only"
ONE_RUN = "one run per cell: the interval covers iterations only (run-to-run variation not measured)"
BASE_KEY = ["host", "runtime", "target", "metric"]


@dataclass(frozen=True)
class TargetComponents:
    """A target's variance components (per host, runtime, metric): pooled over all its cells, and
    for each kind of cell apart, whose runs vary by different amounts: the baseline (Case 1; the
    drift check's runs count with it where they reach a caller, tables.py drops them before the
    IR tables), Case 1u, the concurrent cells (a partner adds its own run-to-run variation). Measured here: Case 1's fresh pinned containers differ from run to run by 14-16 %
    (L, Y) with 3-5 % between iterations, 1u's by 4 % with 11-12 % (the scheduler moves it
    between cores inside a run); pooled into one alone side, Case 1's intervals were too narrow
    (Y: covered 92 %) and 1u's too (NR: 92 %) (docs/statistics.md, "The run is the unit")."""

    pooled: Components
    baseline: Components | None
    unlimited: Components | None
    concurrent: Components | None

    def side(self, case: str) -> tuple[Components, bool]:
        """The components of one side of a comparison, the cells of `case`'s kind, and whether
        they are its own (else the pooled ones: that side's runs alone measure no variance
        between runs)."""
        own = {BASELINE: self.baseline, END: self.baseline, UNLIMITED: self.unlimited}.get(
            case, self.concurrent
        )
        return (own, True) if runs_measured(own) else (self.pooled, False)


def _nested(rows: pd.DataFrame) -> Components | None:
    if rows.empty:
        return None
    return nested(rows["value"], list(zip(rows["case"], rows["partner"])), rows["repetition"])


def components_by_target(valid: pd.DataFrame) -> dict[tuple, TargetComponents]:
    """Variance components per host, runtime, target and metric, runs being repetitions
    (variance_components.nested): pooled over every case and partner, and per kind of cell."""
    return {
        key: TargetComponents(
            _nested(g),
            _nested(g[g["case"].isin([BASELINE, END])]),
            _nested(g[g["case"] == UNLIMITED]),
            _nested(g[g["case"].isin(CONCURRENT_CASES)]),
        )
        for key, g in valid.groupby(BASE_KEY, sort=False)
    }


def runs_measured(c) -> bool:
    """Whether the components (or a target's pooled ones) measured the variance between runs
    (some cell ran twice)."""
    c = getattr(c, "pooled", c)
    return c is not None and c.df_run > 0 and np.isfinite(c.iteration)


POOLED_SIDE = (
    "the {side}'s runs measure no variance between runs of their own: the target's pooled components"
)


def ir_components_ci(
    x_runs: list, b_runs: list, higher: bool, c: TargetComponents, x_case: str, b_case: str = BASELINE
):
    """The IR's 95 % CI from the variance components: each side's mean with its runs and their
    iterations (mean_se) and the components of its own kind of cell (TargetComponents.side),
    the ratio's interval on the log scale, t with Welch's degrees of freedom.
    Returns (low, high, the RatioInterval, notes)."""
    c_x, own_x = c.side(x_case)
    c_b, own_b = c.side(b_case)
    if not (own_x and own_b):  # one estimate for both sides: the pooled one
        c_x = c_b = c.pooled
    r = ratio_interval(x_runs, b_runs, c_x, c_b)
    notes = [
        POOLED_SIDE.format(side=side) for side, own in (("comparison", own_x), ("baseline", own_b)) if not own
    ]
    low, high = (r.low - 1, r.high - 1) if higher else (1 - r.high, 1 - r.low)
    return low, high, r, notes


def ir_bootstrap_ci(
    x, base, higher_is_better: bool, n_resamples: int = N_RESAMPLES, seed: int = SEED, key: tuple = ()
) -> tuple[float, float, str, str]:
    """95% CI of the IR (resampling.relative_change_ci)."""
    return relative_change_ci(x, base, higher_is_better, n_resamples, seed, key)


def interference_ratios(
    samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED, jobs: int = 1
) -> pd.DataFrame:
    """IR of every concurrent (case != 1) group against its case-1 baseline. Where the cells have
    repeated runs, the CI covers runs and iterations (variance components pooled per target and
    metric); with one run per cell, a bootstrap over iterations, which the row says."""
    df = _prepare(samples)
    conc = df[df["case"] != BASELINE]
    if conc.empty:
        return pd.DataFrame(columns=INTERFERENCE_COLUMNS)
    valid = _valid(df)
    comps = components_by_target(valid)
    runs = {k: runs_of(g) for k, g in valid.groupby(GROUP, sort=False)}
    # The baseline pools the target's case-1 runs whatever their partner field says.
    base_runs = {k: runs_of(g) for k, g in valid[valid["case"] == BASELINE].groupby(BASE_KEY, sort=False)}
    base_seen = set(df.loc[df["case"] == BASELINE, BASE_KEY].itertuples(index=False, name=None))
    groups = conc.groupby(GROUP, sort=True).agg(
        unit=("unit", "first"), higher_is_better=("higher_is_better", "first")
    )
    rows, boot, boot_rows = [], [], []
    for key, meta in groups.iterrows():
        host, runtime, case, target, partner, metric = key
        bkey = (host, runtime, target, metric)
        xr, br = runs.get(key, []), base_runs.get(bkey, [])
        x = np.concatenate(xr) if xr else np.empty(0)
        b = np.concatenate(br) if br else np.empty(0)
        higher = bool(meta["higher_is_better"])
        row = dict(
            zip(GROUP, key),
            unit=meta["unit"],
            higher_is_better=higher,
            mean=x.mean() if x.size else np.nan,
            baseline_mean=b.mean() if b.size else np.nan,
            n=x.size,
            baseline_n=b.size,
            ir=np.nan,
            ir_ci_low=np.nan,
            ir_ci_high=np.nan,
            ir_ci_method="",
            ci_level="",
            ir_se_own=np.nan,
            ir_se_baseline=np.nan,
            df_own=np.nan,
            df_baseline=np.nan,
            ci_df=np.nan,
            runs=len(xr),
            baseline_runs=len(br),
            ir_unpaired=np.nan,
            ir_unpaired_ci_low=np.nan,
            ir_unpaired_ci_high=np.nan,
            blocks=np.nan,
            reason="",
        )
        c = comps.get(bkey)
        if bkey not in base_seen:
            row["reason"] = "no baseline"
        elif b.size == 0:
            row["reason"] = "baseline has no valid samples"
        elif x.size == 0:
            row["reason"] = "no valid samples"
        elif row["baseline_mean"] == 0:
            row["reason"] = "baseline mean is 0: IR undefined"
        else:
            row["ir"] = ir_value(row["mean"], row["baseline_mean"], higher)
            if runs_measured(c) and min(x.size, b.size) >= 2:
                low, high, r, notes = ir_components_ci(xr, br, higher, c, case)
                # The SE in the comparison's own part and the baseline's, by the delta method
                # (dIR = ±ratio·d log ratio): findings.inference reads the covariance of the IRs
                # that share a baseline from it.
                row.update(ir_ci_low=low, ir_ci_high=high, ir_ci_method=f"variance_components_t{r.df:.3g}",
                           ci_level=RUNS_LEVEL, ir_se_own=r.ratio * r.se_x, ir_se_baseline=r.ratio * r.se_b,
                           df_own=r.df_x, df_baseline=r.df_b, ci_df=r.df, reason=_join(notes))  # fmt: skip
            elif x.size < 2 or b.size < 2:
                row["reason"] = f"fewer than 2 samples (n={x.size}, baseline_n={b.size}): no CI"
            else:
                boot.append((x, b, higher, n_resamples, seed, key))
                boot_rows.append(row)
        rows.append(row)
    for row, (lo, hi, method, reason) in zip(boot_rows, _map(ir_bootstrap_ci, boot, jobs)):
        notes = [reason, ONE_RUN]
        if min(row["n"], row["baseline_n"]) < SMALL_N:
            notes.append(f"fewer than {SMALL_N} samples on a side: bootstrap CI may be too narrow")
        row.update(
            ir_ci_low=lo, ir_ci_high=hi, ir_ci_method=method, ci_level=ITERATIONS_LEVEL, reason=_join(notes)
        )
    _pair_within_runs(df, rows)
    return pd.DataFrame(rows, columns=INTERFERENCE_COLUMNS)


def _pair_within_runs(df: pd.DataFrame, rows: list[dict]) -> None:
    """Where the runs switched the partner on and off (phases.py), each cell's IR becomes the
    paired one (paired.py), the separate runs' IR kept beside it."""
    effects = paired.partner_effects(df[~df["_failed"] & ~df["_stolen"]])
    if not effects:
        return
    limits = {
        tuple(r[c] for c in BASE_KEY): r
        for r in rows
        if r["case"] == UNLIMITED and r["ci_level"] == RUNS_LEVEL
    }
    for row in rows:
        effect = effects.get(tuple(row[c] for c in GROUP))
        if effect is not None:
            row.update(
                paired.paired_row(row, effect, limits.get(tuple(row[c] for c in BASE_KEY)), CONFIDENCE)
            )
