"""Placement advice, part 2: the predictions of predict.py checked on the pairs and triples the
pair study measured (results/stats/pairs/interference.tsv), which never enter the predictions.

validation_rows: per (case, target, partner, metric), the measured IR with its CI beside the
predicted IR with its interval, the error, whether the measurement lies inside the prediction's
interval, the first model's prediction (predict.py's "product" rule, kept to compare), and the
naive predictor "the case's mean measured IR" left-one-out (its mean over the case's other
(case, target, partner) units, so it never sees the pair it predicts).

With a replicate (the same pairs measured again, in another session of the same host: another
interference.tsv), the replicate's IR is scored as one more "predictor": how well the pairs'
own measurement predicts itself, the floor that no predictor can be expected to beat when each
side is one measurement (its MAE is about √2 times one measurement's error).

summary: mean absolute error (IR percentage points), sign accuracy (over rows whose measured IR is
at least 5 % away from 0) and Spearman's rho, for the profile predictor, the first model, two
naive ones (IR = 0; the case's left-one-out mean) and the replicate where given; and the paired difference of mean absolute
errors, the predictor's minus each other one's (< 0: the predictor is better). Each with a 95 % bootstrap CI
(scipy.stats.bootstrap, BCa, else percentile) that resamples units, a unit being one (case,
target, partner) with all its metrics' rows, since a unit's metrics come from the same runs.
Over all cases, per case, and over the triples' rows; every predictor is scored on the same rows
(both IRs known).

failures: the rows whose measured IR lies outside the prediction's interval, named.

figure: predicted against measured IR (percent), each with its interval, coloured by case, on
the diagonal of agreement."""

from __future__ import annotations

import numpy as np
import pandas as pd

from interference.core.groups import OF_A_TRIPLE
from interference.stats.resampling import bca_else_percentile

KEY = ["case", "target", "partner", "metric"]
UNIT = ["case", "target", "partner"]
SIGN_THRESHOLD = 0.05  # a measured |IR| below 5 % has no sign worth predicting
SEED = 20240601
N_RESAMPLES = 2000
PREDICTORS = {
    "profile": "ir_predicted",
    "profile_product": "ir_product",
    "zero": "ir_zero",
    "case_mean_loo": "ir_case_mean_loo",
    "replicate": "ir_replicate",
}
VALIDATION_COLUMNS = [
    *KEY, "ir_measured", "measured_low", "measured_high", "runs", "ir_predicted", "predicted_low",
    "predicted_high", "error_pp", "inside_interval", "intervals_overlap", "ir_product", "ir_zero",
    "ir_case_mean_loo", "ir_replicate", "reason",
]  # fmt: skip
SUMMARY_COLUMNS = [
    "scope",
    "predictor",
    "measure",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "units",
    "rows",
    "note",
]


def validation_rows(
    predicted: pd.DataFrame,
    measured: pd.DataFrame,
    host=None,
    runtime=None,
    first: pd.DataFrame | None = None,
    replicate: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """validation.tsv: every measured concurrent row of one host and runtime (choose them when
    interference.tsv has several) with its prediction (predict.PREDICTION_COLUMNS), the first
    model's (`first`, the same columns; none: empty) and the replicate's measured IR
    (`replicate`: interference.tsv's columns; none: empty)."""
    m = concurrent_rows(measured, host, runtime)
    m = m[KEY + ["ir", "ir_ci_low", "ir_ci_high", "runs"]].rename(
        columns={"ir": "ir_measured", "ir_ci_low": "measured_low", "ir_ci_high": "measured_high"}
    )
    p = predicted.astype({c: str for c in KEY})[KEY + ["ir", "ir_low", "ir_high", "reason"]]
    p = p.rename(columns={"ir": "ir_predicted", "ir_low": "predicted_low", "ir_high": "predicted_high"})
    rows = m.merge(p, on=KEY, how="left", validate="one_to_one")
    rows["reason"] = rows.reason.where(rows.ir_predicted.notna() | rows.reason.notna(), "not predicted")
    rows["error_pp"] = 100 * (rows.ir_predicted - rows.ir_measured)
    rows["inside_interval"] = (rows.ir_measured >= rows.predicted_low) & (
        rows.ir_measured <= rows.predicted_high
    )
    rows["intervals_overlap"] = (rows.measured_low <= rows.predicted_high) & (
        rows.predicted_low <= rows.measured_high
    )
    if first is not None:
        f = first.astype({c: str for c in KEY})[KEY + ["ir"]].rename(columns={"ir": "ir_product"})
        rows = rows.merge(f, on=KEY, how="left", validate="one_to_one")
    else:
        rows["ir_product"] = np.nan
    rows["ir_zero"] = 0.0
    rows["ir_case_mean_loo"] = case_mean_left_one_out(rows)
    if replicate is not None:
        r = concurrent_rows(replicate, host, runtime)[KEY + ["ir"]].rename(columns={"ir": "ir_replicate"})
        rows = rows.merge(r, on=KEY, how="left", validate="one_to_one")
    else:
        rows["ir_replicate"] = np.nan
    return rows.sort_values(KEY, ignore_index=True)[VALIDATION_COLUMNS]


def concurrent_rows(measured: pd.DataFrame, host=None, runtime=None) -> pd.DataFrame:
    """interference.tsv's rows of Cases 2, 3a, 3b and 2-3a with an IR, of one host and runtime."""
    m = measured.astype({c: str for c in KEY})
    if host is not None:
        m = m[m.host.astype(str) == str(host)]
    if runtime is not None:
        m = m[m.runtime.astype(str) == str(runtime)]
    if "host" in m and m[["host", "runtime"]].drop_duplicates().shape[0] > 1:
        raise ValueError("interference.tsv has several hosts or runtimes: choose one (host=, runtime=)")
    return m[m.case.isin(["2", "3a", "3b", "2-3a"]) & np.isfinite(m.ir.astype(float))]


def case_mean_left_one_out(rows: pd.DataFrame) -> pd.Series:
    """Per row, the mean measured IR of its case's rows that belong to other units."""
    case_sum = rows.groupby("case").ir_measured.transform("sum")
    case_n = rows.groupby("case").ir_measured.transform("count")
    unit_sum = rows.groupby(UNIT).ir_measured.transform("sum")
    unit_n = rows.groupby(UNIT).ir_measured.transform("count")
    others = case_n - unit_n
    return ((case_sum - unit_sum) / others).where(others > 0)


def mae_pp(m, p, w) -> float:
    return 100 * np.sum(w * np.abs(p - m)) / np.sum(w)


def sign_accuracy(m, p, w) -> float:
    signed = np.abs(m) >= SIGN_THRESHOLD
    return np.sum(w * (signed & (np.sign(p) == np.sign(m)))) / np.sum(w * signed)


def spearman_rho(m, p, w) -> float:
    """Pearson's r of the ranks (mid-ranks for ties) of the rows repeated w times."""
    m, p = np.repeat(m, w), np.repeat(p, w)
    if len(m) < 2 or np.ptp(m) == 0 or np.ptp(p) == 0:
        return np.nan  # a constant side has no rank correlation
    return float(np.corrcoef(midranks(m), midranks(p))[0, 1])


def midranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank (scipy's rankdata is slow inside a bootstrap)."""
    _, where, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2)[where]


MEASURES = {"mae_pp": mae_pp, "sign_accuracy": sign_accuracy, "spearman_rho": spearman_rho}


def measures(measured, predicted, weights=None) -> dict[str, float]:
    """MAE (percentage points), sign accuracy and Spearman's rho, each row counted `weights`
    times (a bootstrap resample draws a unit k times: its rows count k times)."""
    m, p = np.asarray(measured, float), np.asarray(predicted, float)
    w = np.ones(len(m), int) if weights is None else np.asarray(weights, int)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {name: float(f(m, p, w)) for name, f in MEASURES.items()}


def unit_bootstrap(statistic, n_units: int, seed: int, key: tuple, n_resamples: int):
    """95 % CI of statistic(counts), counts = how often each unit is drawn; (low, high, method)."""
    low, high, method, _ = bca_else_percentile(
        (np.arange(n_units),),
        lambda units: statistic(np.bincount(units, minlength=n_units)),
        n_resamples,
        seed,
        key,
        vectorized=False,
    )
    return low, high, f"bootstrap_units_{method}_{n_resamples}" if method else ""


def summary(
    rows: pd.DataFrame, seed: int = SEED, n_resamples: int = N_RESAMPLES, name: str = "profile"
) -> pd.DataFrame:
    """The summary table (SUMMARY_COLUMNS), over all cases, per case, over the triples' rows (a
    partner naming two others) where there are any, and over each target's pairs ("pairs of L");
    `name`: the predictor's (ir_predicted)."""
    needed = ["ir_measured", "ir_predicted", "ir_case_mean_loo"]
    # Every predictor on the same rows (those given: the first model, the replicate).
    needed += [c for c in ("ir_product", "ir_replicate") if rows[c].notna().any()]
    scored = rows.dropna(subset=needed)
    scopes = [("all", scored), *((f"case {c}", g) for c, g in scored.groupby("case"))]
    of_a_triple = scored.partner.astype(str).str.contains(OF_A_TRIPLE)
    triples = scored[of_a_triple]
    scopes += [("triples", triples)] if len(triples) else []
    # Each target's pairs on their own (issue 55 asks for the figures per microservice).
    scopes += [(f"pairs of {t}", g) for t, g in scored[~of_a_triple].groupby("target")]
    out = [row for scope, part in scopes for row in _scope_rows(scope, part, seed, n_resamples, name)]
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


def _scope_rows(scope: str, part: pd.DataFrame, seed: int, n_resamples: int, name: str) -> list[dict]:
    units = part.groupby(UNIT, sort=True).ngroup().to_numpy()
    n_units = int(units.max()) + 1 if len(units) else 0
    m, ours = part.ir_measured.to_numpy(float), part.ir_predicted.to_numpy(float)

    def score(p, measure):
        return lambda counts: MEASURES[measure](m, p, counts[units])

    def gain(p):  # the predictor's MAE minus a naive one's, on the same resample
        return lambda counts: mae_pp(m, ours, counts[units]) - mae_pp(m, p, counts[units])

    def ratio(p):  # the predictor's MAE over the replicate's: 1 = as good as measuring again
        return lambda counts: mae_pp(m, ours, counts[units]) / mae_pp(m, p, counts[units])

    out = []
    for predictor, column in PREDICTORS.items():
        p = part[column].to_numpy(float)
        if np.isnan(p).all():
            continue  # a predictor not given (the first model, when not asked for)
        label = name if predictor == "profile" else predictor
        for measure in MEASURES:
            out.append(_row(scope, label, measure, score(p, measure), n_units, len(part), seed, n_resamples))
        if predictor != "profile":
            measure = f"mae_difference_vs_{predictor}_pp"
            out.append(_row(scope, name, measure, gain(p), n_units, len(part), seed, n_resamples))
        if predictor == "replicate":
            measure = "mae_ratio_vs_replicate"
            out.append(_row(scope, name, measure, ratio(p), n_units, len(part), seed, n_resamples))
    return out


def _row(scope, predictor, measure, statistic, n_units, n_rows, seed, n_resamples) -> dict:
    """One summary row: the statistic on the units as they are, and its bootstrap interval."""
    row = {"scope": scope, "predictor": predictor, "measure": measure, "units": n_units, "rows": n_rows}
    row.update(value=np.nan, ci_low=np.nan, ci_high=np.nan, ci_method="", note="")
    if n_units == 0:
        return row | {"note": "no scored rows"}
    with np.errstate(invalid="ignore", divide="ignore"):
        row["value"] = float(statistic(np.ones(n_units, int)))
    if not np.isfinite(row["value"]):
        return row | {"note": "undefined (a constant predictor, or no measured |IR| >= 5 %)"}
    if n_units < 3:
        return row | {"note": "fewer than 3 units: no interval"}
    key = (scope, predictor, measure)
    row["ci_low"], row["ci_high"], row["ci_method"] = unit_bootstrap(
        statistic, n_units, seed, key, n_resamples
    )
    return row


def failures(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows whose measured IR lies outside the prediction's interval, each named."""
    bad = rows[rows.ir_predicted.notna() & ~rows.inside_interval].copy()
    bad.insert(
        0,
        "name",
        [
            f"case {r.case}: {r.target} beside {r.partner} ({r.metric}): measured {r.ir_measured:+.3f} "
            f"[{r.measured_low:+.3f}, {r.measured_high:+.3f}], predicted {r.ir_predicted:+.3f} "
            f"[{r.predicted_low:+.3f}, {r.predicted_high:+.3f}]"
            for r in bad.itertuples()
        ],
    )
    return bad.reset_index(drop=True)


def validate(
    predicted,
    measured,
    host=None,
    runtime=None,
    seed=SEED,
    n_resamples=N_RESAMPLES,
    first=None,
    replicate=None,
    name="profile",
):
    """(validation.tsv rows, the summary table, the failures); `first`: the first model's
    predictions; `replicate`: the pairs measured again (interference.tsv of another session);
    `name`: the predictor's in the summary (profile: the bubble model; cpu_shares)."""
    rows = validation_rows(predicted, measured, host, runtime, first, replicate)
    return rows, summary(rows, seed, n_resamples, name), failures(rows)


def figure(rows: pd.DataFrame):
    """Predicted against measured IR in percent, both intervals, a colour per case (a Figure)."""
    from interference.core.case_colours import CASE_COLOR
    from interference.rendering.kit.figures import PALETTE, style
    from interference.rendering.kit.figures.scatter import Point, comparison_scatter

    style()
    cases = sorted(set(rows.case))
    # The pair study's colour of each case, as in its section of the report.
    colour = {c: CASE_COLOR.get(c, PALETTE[i % len(PALETTE)]) for i, c in enumerate(cases)}
    scored = rows[rows.ir_predicted.notna()]
    if scored.empty:  # nothing predicted (validation.tsv's reasons say why): an empty figure saying so
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.6, 1.2))
        fig.text(
            0.5, 0.5, "No measured pair was predicted (validation.tsv says why).", ha="center", va="center"
        )
        return fig
    points = [
        Point(100 * r.ir_measured, 100 * r.ir_predicted, 100 * r.predicted_low, 100 * r.predicted_high,
              colour[r.case], "o", 100 * r.measured_low, 100 * r.measured_high)
        for r in scored.itertuples()
    ]  # fmt: skip
    return comparison_scatter(
        points,
        100 * SIGN_THRESHOLD,
        [(f"Case {c}", colour[c]) for c in cases],
        [],
        "measured IR (%), its CI",
        "predicted IR (%), its 95 % interval",
    )
