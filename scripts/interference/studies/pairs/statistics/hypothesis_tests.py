"""Significance of the case effect in the pair study: a two-way type II ANOVA (case x partner)
per host, runtime, target and metric with Kruskal-Wallis where residuals are not normal, and
Tukey HSD of each concurrent case against the baseline per partner. See docs/statistics.md."""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats

from interference.core.groups import OF_A_TRIPLE
from interference.studies.pairs.cases import PAPERS_CONCURRENT_CASES
from interference.studies.pairs.statistics import (
    ALPHA,
    ANOVA_COLUMNS,
    BASELINE,
    FAMILY,
    GROUP,
    POSTHOC_COLUMNS,
    REL_TOL,
    TERM_NAMES,
    _join,
    _map,
    _prepare,
    _valid,
)

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
    for method, formula, kw_factor in _candidates(k_case, k_partner):  # noqa: B007 (read after the break)
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


def pairs_only(df: pd.DataFrame) -> pd.DataFrame:
    """The papers' design: Cases 1, 2, 3a and 3b with one partner (a triple's rows and Case 2-3a
    are the placement advice's, tested there)."""
    return df[
        df["case"].isin((BASELINE, *PAPERS_CONCURRENT_CASES))
        & ~df["partner"].astype(str).str.contains(OF_A_TRIPLE)
    ]


def anova(samples: pd.DataFrame) -> pd.DataFrame:
    """Per host, runtime, target, metric: value ~ case * partner over cases 2, 3a, 3b."""
    df = pairs_only(_prepare(samples))
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


@functools.cache
def _q_crit(k: int, df: float, alpha: float) -> float:
    """The studentized range's (1 - alpha) quantile for k groups and df: one per family size."""
    return float(stats.studentized_range.ppf(1 - alpha, k, df))


def tukey(groups: dict[str, np.ndarray], alpha: float = ALPHA) -> list[dict]:
    """Tukey HSD of every pair of groups, Tukey-Kramer for unequal n (a group of one sample
    included, which scipy.stats.tukey_hsd refuses): the studentized range distribution of
    scipy.stats with the pooled within-group variance. meandiff = mean2 - mean1, with its
    simultaneous (1 - alpha) CI; statsmodels' pairwise_tukeyhsd gives the same numbers."""
    labels = sorted(groups)
    means = {c: groups[c].mean() for c in labels}
    df = sum(groups[c].size for c in labels) - len(labels)
    pooled = sum(((groups[c] - means[c]) ** 2).sum() for c in labels) / df
    q_crit = _q_crit(len(labels), float(df), alpha)
    rows = []
    for a, b in itertools.combinations(labels, 2):
        diff = means[b] - means[a]
        se = np.sqrt(pooled / 2 * (1 / groups[a].size + 1 / groups[b].size))
        p = float(stats.studentized_range.sf(abs(diff) / se, len(labels), df))
        rows.append(
            dict(
                group1=a,
                group2=b,
                meandiff=float(diff),
                p_adj=min(1.0, p),
                ci_low=float(diff - q_crit * se),
                ci_high=float(diff + q_crit * se),
                reject=bool(p < alpha),
            )
        )
    return rows


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
    df = pairs_only(_prepare(samples))
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
