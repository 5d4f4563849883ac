"""Statistics of the tidy samples: summary, interference ratios (IR), ANOVA and Tukey HSD.

Only samples with status "ok", a value and in_overlap True count; every other sample is
counted in n_excluded_failed or n_excluded_overlap of its group. Case "1" (the target alone in
a limited container) is the baseline of every concurrent case (2, 3a, 3b) of the same host,
runtime, target and metric. A statistic that cannot be computed is left empty and the row says
why (note / reason): never a crash, never an unexplained NaN.

Each table is one job of the statistics rule (python -m interference.statistics --study pairs
--table NAME); PairsStudy.tables in __init__.py maps the names to these functions."""

from __future__ import annotations

import functools
import logging
import time
import warnings
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import optimize, stats
from statsmodels.sandbox.stats.multicomp import tukeyhsd
from statsmodels.stats.libqsturng import qsturng

from interference.descriptive import CONFIDENCE, STAT_COLUMNS, describe, prepare
from interference.descriptive import join as _join
from interference.descriptive import valid as _valid

BASELINE = "1"
GROUP = ["host", "runtime", "case", "target", "partner", "metric"]
# One ANOVA / one Tukey family per host, runtime, target and metric.
FAMILY = ["host", "runtime", "target", "metric"]
ALPHA = 1 - CONFIDENCE
N_RESAMPLES = 2000
SEED = 20240601
# Below this many samples on a side a bootstrap interval tends to be too narrow: said in reason.
SMALL_N = 10
# Sums of squares below this fraction of the data's scale are rounding noise, not variance:
# a ratio of two noises would be a meaningless (often huge) F.
REL_TOL = 1e-12

SUMMARY_COLUMNS = GROUP + STAT_COLUMNS
INTERFERENCE_COLUMNS = GROUP[:5] + [
    "metric",
    "unit",
    "higher_is_better",
    "mean",
    "baseline_mean",
    "n",
    "baseline_n",
    "ir",
    "ir_ci_low",
    "ir_ci_high",
    "ir_ci_method",
    "reason",
]
ANOVA_COLUMNS = FAMILY + ["method", "term", "df", "sum_sq", "F", "p", "partial_eta_sq", "shapiro_p", "note"]
POSTHOC_COLUMNS = FAMILY + [
    "partner",
    "group1",
    "group2",
    "meandiff",
    "p_adj",
    "ci_low",
    "ci_high",
    "reject",
    "note",
]
# The number columns of each output, for readers of these files (the report).
_TEXT = set(GROUP + FAMILY) | {
    "unit",
    "higher_is_better",
    "ci_method",
    "ir_ci_method",
    "reason",
    "note",
    "method",
    "term",
    "group1",
    "group2",
    "reject",
}
NUMERIC_COLUMNS = {
    name: [c for c in columns if c not in _TEXT]
    for name, columns in [
        ("summary", SUMMARY_COLUMNS),
        ("interference", INTERFERENCE_COLUMNS),
        ("anova", ANOVA_COLUMNS),
        ("posthoc", POSTHOC_COLUMNS),
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
    return prepare(samples, GROUP)


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


def ir_value(mean: float, baseline_mean: float, higher_is_better: bool) -> float:
    """The papers' IR: (mu_i - mu)/mu if higher is better, else (mu - mu_i)/mu; < 0 = worse."""
    sign = 1.0 if higher_is_better else -1.0
    return sign * (mean - baseline_mean) / baseline_mean


def _ir_statistic(higher_is_better: bool):
    # Vectorised over bootstrap resamples (scipy passes arrays with a resample axis).
    def statistic(x, base, axis=-1):
        return ir_value(np.mean(x, axis=axis), np.mean(base, axis=axis), higher_is_better)

    return statistic


def _rng(seed: int, key: tuple) -> np.random.Generator:
    """A generator per group: each row's CI depends only on its own data, not on row order."""
    return np.random.default_rng([seed, zlib.crc32("\t".join(map(str, key)).encode())])


def ir_bootstrap_ci(
    x, base, higher_is_better: bool, n_resamples: int = N_RESAMPLES, seed: int = SEED, key: tuple = ()
) -> tuple[float, float, str, str]:
    """95% CI of the IR by resampling both groups independently: (low, high, method, reason).

    BCa first; when BCa is undefined (degenerate, e.g. zero variance) the percentile interval."""
    stat = _ir_statistic(higher_is_better)
    reasons = []
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                (np.asarray(x, float), np.asarray(base, float)),
                stat,
                n_resamples=n_resamples,
                paired=False,
                vectorized=True,
                confidence_level=CONFIDENCE,
                method=method,
                rng=_rng(seed, key),
            )
        low, high = res.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high), f"bootstrap_{method.lower()}_{n_resamples}", _join(reasons)
        reasons.append(f"bootstrap {method} interval undefined")
    return np.nan, np.nan, "", _join(reasons)


def interference_ratios(
    samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED, jobs: int = 1
) -> pd.DataFrame:
    """IR of every concurrent (case != 1) group against its case-1 baseline."""
    df = _prepare(samples)
    conc = df[df["case"] != BASELINE]
    if conc.empty:
        return pd.DataFrame(columns=INTERFERENCE_COLUMNS)
    valid = _valid(df)
    # Sorted: the resamples (hence the CI) then depend on the values, not on the row order.
    values = {k: np.sort(g.to_numpy()) for k, g in valid.groupby(GROUP, sort=False)["value"]}
    base_key = ["host", "runtime", "target", "metric"]
    # The baseline pools the target's case-1 samples whatever their partner field says.
    base_values = {
        k: np.sort(g.to_numpy())
        for k, g in valid[valid["case"] == BASELINE].groupby(base_key, sort=False)["value"]
    }
    base_seen = set(df.loc[df["case"] == BASELINE, base_key].itertuples(index=False, name=None))
    groups = conc.groupby(GROUP, sort=True).agg(
        unit=("unit", "first"), higher_is_better=("higher_is_better", "first")
    )
    rows, boot, boot_rows = [], [], []
    for key, meta in groups.iterrows():
        host, runtime, case, target, partner, metric = key
        bkey = (host, runtime, target, metric)
        x = values.get(key, np.empty(0))
        b = base_values.get(bkey, np.empty(0))
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
            reason="",
        )
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
            if x.size < 2 or b.size < 2:
                row["reason"] = f"fewer than 2 samples (n={x.size}, baseline_n={b.size}): no CI"
            else:
                boot.append((x, b, higher, n_resamples, seed, key))
                boot_rows.append(row)
        rows.append(row)
    for row, (lo, hi, method, reason) in zip(boot_rows, _map(ir_bootstrap_ci, boot, jobs)):
        if min(row["n"], row["baseline_n"]) < SMALL_N:
            reason = _join(
                [reason, f"fewer than {SMALL_N} samples on a side: bootstrap CI may be too narrow"]
            )
        row.update(ir_ci_low=lo, ir_ci_high=hi, ir_ci_method=method, reason=reason)
    return pd.DataFrame(rows, columns=INTERFERENCE_COLUMNS)


# ---------------------------------------------------------------------------------------------
# ANOVA


def _candidates(k_case: int, k_partner: int) -> list[tuple[str, str, str]]:
    """Models from the richest down: (method, formula, factor a Kruskal-Wallis would test)."""
    out = []
    if k_case >= 2 and k_partner >= 2:
        out += [
            ("anova2", "value ~ C(case) * C(partner)", "case"),
            ("anova2_no_interaction", "value ~ C(case) + C(partner)", "case"),
        ]
    if k_case >= 2:
        out.append(("anova1_case", "value ~ C(case)", "case"))
    if k_partner >= 2:
        out.append(("anova1_partner", "value ~ C(partner)", "partner"))
    return out


def _fit(d: pd.DataFrame, formula: str):
    """The fitted OLS model, or None and why it cannot be tested."""
    try:
        fit = smf.ols(formula, data=d).fit()
    except (ValueError, np.linalg.LinAlgError) as e:
        return None, f"model failed: {e}"
    p = fit.model.exog.shape[1]
    if fit.model.rank < p:
        return None, "not estimable (empty cells or confounded factors)"
    if fit.df_resid < 1:
        return None, "no residual degrees of freedom"
    if fit.ssr <= REL_TOL * fit.centered_tss:
        return None, "zero residual variance"
    return fit, ""


def _anova_family(d: pd.DataFrame) -> list[dict]:
    """Rows (without the family key) for the concurrent-case samples d of one family."""

    def not_testable(why):
        return [dict(method="not_testable", term="", note=why)]

    if d.empty:
        return not_testable("no valid samples in cases 2/3a/3b")
    v = d["value"].to_numpy()
    if np.ptp(v) <= REL_TOL * max(np.abs(v).max(), 1e-300):
        return not_testable(f"all {v.size} values identical: no variance to test")
    k_case, k_partner = d["case"].nunique(), d["partner"].nunique()
    skipped = []
    if k_case < 2:
        skipped.append(f"only case {d['case'].iloc[0]}")
    if k_partner < 2:
        skipped.append(f"only partner {d['partner'].iloc[0]}")
    for method, formula, kw_factor in _candidates(k_case, k_partner):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fit, why = _fit(d, formula)
            if fit is None:
                skipped.append(f"{method} {why}")
                continue
            table = sm.stats.anova_lm(fit, typ=2)
        break
    else:
        return not_testable(_join(skipped) or "too few samples")
    model_note = _join(skipped)
    if method == "anova1_case" and k_partner >= 2:
        model_note = _join([model_note, "partner effect not separable from case"])
    if method == "anova1_partner" and k_case >= 2:
        model_note = _join([model_note, "case effect not separable from partner"])
    resid = fit.resid.to_numpy()
    shapiro_p, shapiro_note = np.nan, ""
    if resid.size < 3:
        shapiro_note = "shapiro needs 3 residuals"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shapiro_p = float(stats.shapiro(resid).pvalue)
        if resid.size > 5000:
            shapiro_note = "shapiro p approximate for N > 5000"
    ss_resid = table.loc["Residual", "sum_sq"]
    rows = []
    for term, t in table.iterrows():
        is_resid = term == "Residual"
        rows.append(
            dict(
                method=method,
                term=TERM_NAMES.get(term, term),
                df=t["df"],
                sum_sq=t["sum_sq"],
                F=np.nan if is_resid else t["F"],
                p=np.nan if is_resid else t["PR(>F)"],
                partial_eta_sq=np.nan if is_resid else t["sum_sq"] / (t["sum_sq"] + ss_resid),
                shapiro_p=shapiro_p,
                note=_join([model_note, shapiro_note, "residual: no F test" if is_resid else ""]),
            )
        )
    if shapiro_p < ALPHA:
        rows.append(_kruskal(d, kw_factor, shapiro_p))
    return rows


def _kruskal(d: pd.DataFrame, factor: str, shapiro_p: float) -> dict:
    """Kruskal-Wallis on factor (residuals not normal); the H statistic goes in column F."""
    groups = [g.to_numpy() for _, g in d.groupby(factor, sort=True)["value"]]
    row = dict(
        method="kruskal",
        term=factor,
        df=len(groups) - 1,
        sum_sq=np.nan,
        F=np.nan,
        p=np.nan,
        partial_eta_sq=np.nan,
        shapiro_p=shapiro_p,
        note=f"residuals not normal (shapiro_p < {ALPHA:g}); F holds H",
    )
    try:
        res = stats.kruskal(*groups)
        row.update(F=float(res.statistic), p=float(res.pvalue))
    except ValueError as e:  # e.g. all values identical
        row["note"] += f"; kruskal not computable: {e}"
    return row


def anova(samples: pd.DataFrame) -> pd.DataFrame:
    """Per host, runtime, target, metric: value ~ case * partner over cases 2, 3a, 3b."""
    df = _prepare(samples)
    families = df[FAMILY].drop_duplicates().sort_values(FAMILY)
    conc = _valid(df)
    conc = conc[conc["case"] != BASELINE]
    by_family = {k: g for k, g in conc.groupby(FAMILY, sort=False)}
    rows = []
    for key in families.itertuples(index=False, name=None):
        d = by_family.get(key, conc.iloc[:0])[["value", "case", "partner"]]
        for r in _anova_family(d):
            rows.append(dict(zip(FAMILY, key), **r))
    return pd.DataFrame(rows, columns=ANOVA_COLUMNS)


# ---------------------------------------------------------------------------------------------
# Post hoc


@functools.lru_cache(maxsize=None)
def tukey_q_crit(k: int, df: float, alpha: float = ALPHA) -> float:
    """The critical studentized range q(1 - alpha; k, df), as scipy's studentized_range.ppf.

    The same root of scipy's exact cdf, but bracketed by statsmodels' fast approximation
    (qsturng, ~1e-5): half the cdf evaluations (each a 2-D integral) of the generic ppf."""
    level = 1 - alpha
    try:
        q0 = float(qsturng(level, k, df))
        return optimize.brentq(
            lambda q: stats.studentized_range.cdf(q, k, df) - level,
            q0 * (1 - 2e-3),
            q0 * (1 + 2e-3),
            xtol=1e-12,
        )
    except ValueError:  # outside qsturng's table or no sign change: the generic ppf
        return float(stats.studentized_range.ppf(level, k, df))


def tukey(groups: dict[str, np.ndarray], alpha: float = ALPHA) -> list[dict]:
    """Tukey HSD (Tukey-Kramer for unequal n) of statsmodels, as pairwise_tukeyhsd computes it.

    pairwise_tukeyhsd's own glue (group means, sizes, pooled within variance) feeding
    statsmodels' tukeyhsd with the faster exact q_crit above. meandiff = mean2 - mean1."""
    labels = sorted(groups)
    means = np.array([groups[c].mean() for c in labels])
    nobs = np.array([groups[c].size for c in labels])
    df_within = nobs.sum() - len(labels)
    var_within = sum(((groups[c] - groups[c].mean()) ** 2).sum() for c in labels) / df_within
    q = tukey_q_crit(len(labels), float(df_within), alpha)
    (i, j), reject, meandiffs, _, confint, _, _, _, pvalues = tukeyhsd(
        means, nobs, var_within, df=None, alpha=alpha, q_crit=q
    )
    return [
        dict(
            group1=labels[a],
            group2=labels[b],
            meandiff=float(md),
            p_adj=float(p),
            ci_low=float(ci[0]),
            ci_high=float(ci[1]),
            reject=bool(rej),
        )
        for a, b, md, p, ci, rej in zip(i, j, meandiffs, pvalues, confint, reject)
    ]


def _posthoc_partner(groups: dict[str, np.ndarray], absent: list[str]) -> list[dict]:
    """Tukey HSD between the case groups of one partner (baseline "1" included)."""
    note = _join([f"no valid samples in case {', '.join(absent)}" if absent else ""])
    have = {c: v for c, v in groups.items() if v.size}

    def empty(why):
        return [dict(group1="", group2="", note=_join([note, why]))]

    if len(have) < 2:
        return empty(f"fewer than 2 groups with samples ({', '.join(have) or 'none'})")
    values = np.concatenate(list(have.values()))
    if values.size - len(have) < 1:
        return empty("no residual degrees of freedom (one sample per group)")
    within = sum(((v - v.mean()) ** 2).sum() for v in have.values())
    if within <= REL_TOL * max(((values - values.mean()) ** 2).sum(), np.abs(values).max() ** 2, 1e-300):
        return empty("zero within-group variance: Tukey HSD undefined")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        rows = tukey(have)
    for r in rows:
        r["note"] = note
    return rows


def posthoc(samples: pd.DataFrame, jobs: int = 1) -> pd.DataFrame:
    """Tukey HSD between cases 1, 2, 3a, 3b per host, runtime, target, metric and partner."""
    df = _prepare(samples)
    valid = _valid(df)
    vals = {k: g.to_numpy() for k, g in valid.groupby(GROUP, sort=False)["value"]}
    base = {k: g.to_numpy() for k, g in valid[valid["case"] == BASELINE].groupby(FAMILY, sort=False)["value"]}
    conc = df[df["case"] != BASELINE]
    # Every (case, partner) present in the input, failed ones too, so gaps are reported.
    present = conc.groupby(FAMILY + ["partner"], sort=True)["case"].unique()
    partners_of: dict[tuple, list] = {}
    for (*fam_key, partner), cases in present.items():
        partners_of.setdefault(tuple(fam_key), []).append((partner, sorted(cases)))
    rows, heads, tasks = [], [], []
    for key in df[FAMILY].drop_duplicates().sort_values(FAMILY).itertuples(index=False, name=None):
        host, runtime, target, metric = key
        fam = dict(zip(FAMILY, key))
        if key not in partners_of:
            rows.append(
                dict(
                    fam,
                    partner="",
                    group1="",
                    group2="",
                    note="no concurrent-case samples: nothing to compare",
                )
            )
            continue
        for partner, cases in partners_of[key]:
            groups = {BASELINE: base.get(key, np.empty(0))}
            for case in cases:
                groups[case] = vals.get((host, runtime, case, target, partner, metric), np.empty(0))
            absent = [c for c, v in groups.items() if v.size == 0]
            heads.append(dict(fam, partner=partner))
            tasks.append((groups, absent))
    rows = [
        dict(head, **r) for head, result in zip(heads, _map(_posthoc_partner, tasks, jobs)) for r in result
    ] + rows
    rows.sort(key=lambda r: tuple(r[c] for c in FAMILY + ["partner"]))
    return pd.DataFrame(rows, columns=POSTHOC_COLUMNS)


# ---------------------------------------------------------------------------------------------
# CLI


def run_all(samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED, jobs: int = 1) -> dict:
    """The four tables; jobs > 1 spreads the bootstraps and Tukey families over processes."""
    out = {}
    for name, fn in [
        ("summary", summarize),
        ("interference", lambda s: interference_ratios(s, n_resamples, seed, jobs)),
        ("anova", anova),
        ("posthoc", lambda s: posthoc(s, jobs)),
    ]:
        t0 = time.perf_counter()
        out[name] = fn(samples)
        log.info("%s: %d rows in %.2f s", name, len(out[name]), time.perf_counter() - t0)
    return out


# ---------------------------------------------------------------------------------------------
# Runtimes: the Case 1 baseline of each runtime against a reference runtime

RUNTIME_COLUMNS = [
    "host",
    "target",
    "metric",
    "unit",
    "higher_is_better",
    "runtime",
    "reference",
    "n",
    "mean",
    "reference_n",
    "reference_mean",
    "relative",
    "relative_ci_low",
    "relative_ci_high",
    "relative_ci_method",
    "reason",
]
# Bare metal is the reference where it ran; else Docker, else the first runtime by name.
REFERENCE_ORDER = ("host", "docker")


def reference_runtime(runtimes) -> str:
    present = sorted(set(runtimes))
    return next((r for r in REFERENCE_ORDER if r in present), present[0])


def relative_value(mean: float, reference_mean: float, higher_is_better: bool) -> float:
    """Performance relative to the reference: > 1 is better, whatever the metric's direction."""
    return mean / reference_mean if higher_is_better else reference_mean / mean


def _relative_ci(x, ref, higher_is_better, n_resamples, seed, key):
    def statistic(a, b, axis=-1):
        return relative_value(np.mean(a, axis=axis), np.mean(b, axis=axis), higher_is_better)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method in ("BCa", "percentile"):
            res = stats.bootstrap(
                (np.asarray(x, float), np.asarray(ref, float)),
                statistic,
                n_resamples=n_resamples,
                paired=False,
                vectorized=True,
                confidence_level=CONFIDENCE,
                method=method,
                rng=_rng(seed, key),
            )
            low, high = res.confidence_interval
            if np.isfinite(low) and np.isfinite(high):
                return float(low), float(high), f"bootstrap_{method.lower()}_{n_resamples}"
    return np.nan, np.nan, ""


def runtime_ratios(samples: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """Case 1 means of every runtime relative to the reference runtime of the same host."""
    df = _valid(_prepare(samples))
    df = df[df["case"] == BASELINE]
    rows = []
    for host, d in df.groupby("host", sort=True):
        ref = reference_runtime(d["runtime"])
        for (target, metric), g in d.groupby(["target", "metric"], sort=True):
            base = g.loc[g["runtime"] == ref, "value"].to_numpy()
            hib = bool(g["higher_is_better"].iloc[0])
            for runtime, x in g.groupby("runtime", sort=True)["value"]:
                x = x.to_numpy()
                row = dict(
                    host=host, target=target, metric=metric, unit=g["unit"].iloc[0], higher_is_better=hib,
                    runtime=runtime, reference=ref, n=x.size, mean=x.mean(), reference_n=base.size,
                    reference_mean=base.mean() if base.size else np.nan,
                )  # fmt: skip
                low = high = np.nan
                method, reason = "", ""
                if base.size == 0:
                    reason = f"no Case 1 samples on {ref}"
                elif runtime == ref:
                    low = high = 1.0
                    method, reason = "reference", "the reference itself"
                elif min(x.size, base.size) < 2:
                    reason = "fewer than 2 samples on a side: no interval"
                else:
                    low, high, method = _relative_ci(
                        x, base, hib, n_resamples, seed, (host, target, metric, runtime)
                    )
                rel = relative_value(row["mean"], row["reference_mean"], hib) if base.size else np.nan
                rows.append(dict(row, relative=rel, relative_ci_low=low, relative_ci_high=high,
                                 relative_ci_method=method, reason=reason))  # fmt: skip
    return pd.DataFrame(rows, columns=RUNTIME_COLUMNS)
