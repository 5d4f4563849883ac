"""The profiling study's report section: what it ran (from runs.tsv) and, per microservice, the
resource it is sensitive to and the one it presses on — the inputs of the placement predictor
(predict.py), shown so that a reader can see why an advice ranks a placement where it does."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from interference.core.microservices import registry
from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import esc, num, pct
from interference.stores.stats_tables import read_tsv
from interference.studies.profiling.advice_check import MIN_RUNS
from interference.studies.profiling.plan import PLACEMENTS, RESOURCES

# Issue 35's goal for the predictor on the measured units, pairs and triples (all cases together).
GOAL_MAE_PP, GOAL_SIGN = 5.0, 0.90
NAIVE = {"zero": "predicting 0", "case_mean_loo": "the case's mean IR left one out"}
SUMMARY_NUMERIC = ("value", "ci_low", "ci_high", "units", "rows")
ROWS_NUMERIC = (
    "ir_measured",
    "measured_low",
    "measured_high",
    "ir_predicted",
    "predicted_low",
    "predicted_high",
)


def profile_table(sensitivity: pd.DataFrame, pressure: pd.DataFrame, placement: str = "3a") -> pd.DataFrame:
    """One row per microservice (and metric) of one placement: its degradation beside each
    resource's largest bubble (the most negative of its metrics: the one a bubble hurts most) and
    its pressure on each resource (in that bubble's units; NaN where not measured)."""
    s = sensitivity[sensitivity["placement"].astype(str) == placement].copy()
    s["intensity"] = pd.to_numeric(s["intensity"], errors="coerce")
    s["degradation"] = pd.to_numeric(s["degradation"], errors="coerce")
    p = pressure[pressure["placement"].astype(str) == placement].copy()
    p["pressure"] = pd.to_numeric(p["pressure"], errors="coerce")
    rows = []
    for ms in sorted(set(s["microservice"]) | set(p["microservice"])):
        row = {"microservice": ms}
        for r in RESOURCES:
            mine = s[(s["microservice"] == ms) & (s["resource"] == r)]
            top = mine[mine["intensity"] == mine["intensity"].max()] if not mine.empty else mine
            row[f"sensitivity_{r}"] = top["degradation"].min() if not top.empty else float("nan")
            row[f"largest_{r}"] = top["intensity"].max() if not top.empty else float("nan")
            pr = p[(p["microservice"] == ms) & (p["resource"] == r)]["pressure"]
            row[f"pressure_{r}"] = pr.iloc[0] if not pr.empty else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


class Profiling:
    def __init__(self, doc):
        self.doc = doc
        self.sensitivity = doc.stats.table("profiling", "sensitivity")
        self.pressure = doc.stats.table("profiling", "pressure")
        self.runs = doc.stats.table("profiling", "runs")
        self.cpu_speed = doc.stats.table("profiling", "cpu_speed")

    def method(self) -> list[Block]:
        r = self.runs
        n = len(r)
        keys = r["key"].astype(str) if "key" in r else pd.Series(dtype=str)
        beside = keys.str.contains(r"/(?:cpu|memory|disk|network)-").sum()
        probe = keys.str.contains("/Q/").sum()
        quotas = keys.str.contains("/quota-").sum()
        busy = keys.str.contains("/busy-").sum()
        bubbles = (
            f", and beside a tunable bubble ({beside} runs with a microservice or the probe beside a bubble); "
            f"the reference probe Q in {probe} runs, alone, beside each bubble and beside each microservice"
            if beside or probe
            else ""
        )
        swept = (
            f" The CPU-share model's sweep: {quotas} of them a microservice alone under a CPU quota, every "
            "core allowed (case 1q)."
            if quotas
            else ""
        )
        if busy:
            swept += (
                f" The busy sweep: {busy} of them a microservice unlimited beside containers each spinning a "
                "core (case 1k)."
            )
        return [
            md(
                f"{n} runs (results/stats/profiling/runs.tsv): each microservice alone, limited (Case 1) and "
                f"unlimited (Case 1u){bubbles}. No pair of microservices is measured here: the predicted pairs "
                f"are all held out.{swept} The models and their limits: docs/placement.md."
            )
        ]

    def tables(self) -> list[Block]:
        """A table per placement the profiles measured, and the CPU-share profiles."""
        measured = (
            set(self.sensitivity["placement"].astype(str)) if "placement" in self.sensitivity else set()
        )
        blocks = [b for p in PLACEMENTS if p in measured for b in self.table(p)] + self.cpu_table()
        return blocks or [md("No profiles measured.")]

    def cpu_table(self) -> list[Block]:
        """Each microservice's CPU demand, threads and speed at each quota and beside each number of
        busy neighbours (its first metric)."""
        t = self.cpu_speed
        if t.empty or "case" not in t:
            return []
        t = t.assign(case=t["case"].astype(str))
        if "busy" not in t:  # a table made before the busy sweep existed
            t["busy"] = np.nan
        for c in ("cores", "busy", "speed", "cpu_cores", "threads"):
            t[c] = pd.to_numeric(t[c], errors="coerce")
        quotas = sorted(t.loc[t["case"] == "1q", "cores"].dropna().unique())
        busy = sorted(t.loc[t["case"] == "1k", "busy"].dropna().unique())
        head = ["Microservice (metric)", "CPU demand (cores)", "threads", "Case 1"]
        head += [f"quota {num(q, 2)}" for q in quotas] + [f"beside {num(k, 0)} busy" for k in busy]
        rows = []
        for ms, g in t.groupby("microservice", sort=True):
            first = registry()[ms].metrics[0].name if ms in registry() else None
            g = g[g["metric"] == (first if (g["metric"] == first).any() else g["metric"].iloc[0])]
            alone = g[g["case"] == "1u"]
            case1 = g.loc[g["case"] == "1", "speed"]
            cells = [f"{esc(ms)} ({esc(g['metric'].iloc[0])})",
                     num(alone["cpu_cores"].iloc[0], 2) if not alone.empty else "–",
                     num(alone["threads"].iloc[0], 0) if not alone.empty else "–",
                     num(case1.iloc[0], 2) if not case1.empty else "–"]  # fmt: skip
            for q in quotas:
                at = g.loc[(g["case"] == "1q") & (g["cores"] == q), "speed"]
                cells.append(num(at.iloc[0], 2) if not at.empty else "–")
            for k in busy:
                at = g[(g["case"] == "1k") & (g["busy"] == k)]
                cells.append(
                    f"{num(at['speed'].iloc[0], 2)} at {num(at['cores'].iloc[0], 2)}" if not at.empty else "–"
                )
            rows.append(cells)
        return [
            self.doc.table(
                head,
                rows,
                "The CPU-share model's profiles: each microservice's CPU use alone and unlimited (Case 1u, "
                "cores), the threads it keeps busy, and its speed against Case 1u (above 1 is faster) in Case 1 "
                "and alone under each CPU quota with every core allowed, and unlimited beside each number of "
                "containers spinning a core (at the share of cores the scheduler's rules give it there); "
                "results/stats/profiling/cpu_speed.tsv "
                "(every metric, with intervals).",
                numeric_from=1,
            )
        ]

    def validation(self) -> list[Block]:
        """The check on the measured pairs, when this config has the pair study too (a folder may
        hold an earlier config's or a hand-made validation: not this report's)."""
        if not {"pairs", "profiling"} <= set(self.doc.studies):
            return []
        return Validation(self.doc).blocks()

    def table(self, placement: str = "3a") -> list[Block]:
        t = profile_table(self.sensitivity, self.pressure, placement)
        if t.empty:
            return [md("No profiles measured.")]
        measured = [
            r for r in RESOURCES if t[f"sensitivity_{r}"].notna().any() or t[f"pressure_{r}"].notna().any()
        ]
        head = ["Microservice"] + [f"{r}: slowed by the largest bubble" for r in measured]
        head += [f"{r}: pressure" for r in measured]
        rows = []
        for x in t.to_dict("records"):
            cells = [esc(x["microservice"])]
            cells += [f"{pct(x[f'sensitivity_{r}'])} (at {num(x[f'largest_{r}'], 1)})" for r in measured]
            cells += [num(x[f"pressure_{r}"], 2) for r in measured]
            rows.append(cells)
        return [
            self.doc.table(
                head,
                rows,
                f"Placement {esc(placement)}: each microservice's change beside the largest bubble of each "
                "resource (its worst metric; negative is slower) and its pressure on each resource, in that "
                "bubble's units (cpu: cores, memory: MB, disk: MB/s, network: Gbit/s); "
                "results/stats/profiling/sensitivity.tsv, pressure.tsv.",
                numeric_from=1,
            )
        ]


def goal_verdict(summary: pd.DataFrame) -> tuple[bool, list[str]]:
    """Whether the predictor meets the goal over all cases, and what misses it (summary: the
    rows of validation_summary.tsv with scope "all", numeric)."""

    def row(predictor, measure):
        r = summary[(summary.predictor == predictor) & (summary.measure == measure)]
        return r.iloc[0] if len(r) else None

    missed = []
    mae, sign = row("profile", "mae_pp"), row("profile", "sign_accuracy")
    if mae is None or not mae.value <= GOAL_MAE_PP:
        missed.append(f"mean absolute error above {num(GOAL_MAE_PP, 0)} points")
    if sign is None or not sign.value >= GOAL_SIGN:
        missed.append(f"sign accuracy below {pct(GOAL_SIGN, 0, sign=False)}")
    for name, words in NAIVE.items():
        d = row("profile", f"mae_difference_vs_{name}_pp")
        if d is None or not d.ci_high < 0:
            missed.append(f"not shown better than {words}")
    return not missed, missed


class Validation:
    """The predictions checked on the pair study's measured pairs (results/stats/placement/, the
    rule placement_validation), when the config has both studies."""

    def __init__(self, doc):
        self.doc = doc
        summary = doc.stats.table("placement", "validation_summary", numeric=SUMMARY_NUMERIC)
        self.summary = summary[summary["scope"] == "all"] if not summary.empty else summary
        self.scoped = dict(tuple(summary.groupby("scope"))) if not summary.empty else {}
        self.rows = doc.stats.table(
            "placement", "validation", numeric=ROWS_NUMERIC, flags=("inside_interval",)
        )

    def said(self, predictor: str, measure: str, scope: str = "all") -> str:
        summary = self.summary if scope == "all" else self.scoped.get(scope, pd.DataFrame())
        r = summary[(summary.predictor == predictor) & (summary.measure == measure)]
        if r.empty or not np.isfinite(r.value.iloc[0]):
            return "undefined"
        r = r.iloc[0]
        digits = 1 if measure.endswith("_pp") else 2
        interval = f" [{num(r.ci_low, digits)}, {num(r.ci_high, digits)}]" if np.isfinite(r.ci_low) else ""
        return f"{num(r.value, digits)}{interval}"

    def blocks(self) -> list[Block]:
        if self.summary.empty:
            return []
        first = self.summary.iloc[0]
        ok, missed = goal_verdict(self.summary)
        outside = int((~self.rows.inside_interval & self.rows.ir_predicted.notna()).sum())
        text = (
            f"The predictions from the profiles alone against the {int(first.rows)} measured IRs of "
            f"{int(first.units)} (case, target, partner) units of the pair study (95 % bootstrap intervals over "
            f"units): mean absolute error {self.said('profile', 'mae_pp')} IR points (predicting 0: "
            f"{self.said('zero', 'mae_pp')}; {NAIVE['case_mean_loo']}: {self.said('case_mean_loo', 'mae_pp')}), "
            f"sign accuracy {self.said('profile', 'sign_accuracy')} where the measured |IR| is at least 5 %, "
            f"Spearman's ρ {self.said('profile', 'spearman_rho')}; {outside} measured IRs outside their "
            "prediction's interval (results/stats/placement/failures.tsv names them). "
        )
        if (self.summary.predictor == "replicate").any():
            text += (
                f"The same pairs measured in another session score {self.said('replicate', 'mae_pp')} points "
                "against these: the floor no prediction can be shown to beat. "
            )
        if "triples" in self.scoped:
            t = self.scoped["triples"].iloc[0]
            text += (
                f"Of these, the {int(t.rows)} IRs of {int(t.units)} units measured in triples: mean absolute "
                f"error {self.said('profile', 'mae_pp', 'triples')} points (predicting 0: "
                f"{self.said('zero', 'mae_pp', 'triples')}), sign accuracy "
                f"{self.said('profile', 'sign_accuracy', 'triples')}. "
            )
        text += (
            f"**The goal** (mean absolute error at most {num(GOAL_MAE_PP, 0)} points, sign accuracy at least "
            f"{pct(GOAL_SIGN, 0, sign=False)}, better than both naive predictors) "
            + ("**is met**." if ok else f"**is not met**: {'; '.join(missed)}.")
        )
        out = [md(text)]
        scored = self.rows[self.rows.ir_predicted.notna()]
        if not scored.empty:
            from interference.studies.profiling.validate import figure

            cases = ", ".join(sorted(set(scored.case)))
            out.append(
                self.doc.figure(
                    figure(scored),
                    f"Predicted against measured IR (percent) in Cases {esc(cases)}: the measured interval "
                    "(its level as interference.tsv gives it) across, the prediction's 95 % interval "
                    "(the profiles' inputs, Monte Carlo) up and down; the dashed diagonal is agreement, the "
                    "grey bands |IR| below 5 %. results/stats/placement/validation.tsv.",
                    "Scatter of predicted against measured interference ratios with both intervals",
                )
            )
        return out + [md(advice_check_text(t, name)) for name, t in self.advice_checks()]

    def advice_checks(self) -> list[tuple[str, pd.DataFrame]]:
        """(the set, its check's table) of every advice check in results/stats/placement/."""
        paths = sorted((self.doc.stats.root / "placement").glob("advice-check-*.tsv"))
        numeric = ("rank", "predicted_total", "predicted_low", "predicted_high", "measured_total", "runs",
                   "difference", "difference_low", "difference_high", "df")  # fmt: skip
        return [(p.stem.removeprefix("advice-check-"), read_tsv(p, numeric)) for p in paths]


VERDICT_WORDS = {
    "matches": "the measured order **matches** the advice",
    "reversed": "the measured order **is the reverse** of the advice's",
    "undecided": "the runs **do not decide** whether the measured order matches the advice",
}


def advice_check_text(t: pd.DataFrame, name: str = "") -> str:
    """The advice's recommended and worst-ranked measured placement of a set, with the verdict
    (advice_check.py's table: two placements, then their difference; none: not checkable)."""
    if len(t) < 3:
        return (
            f"The advice for {esc(', '.join(name.split('+')))} could not be checked: fewer than two of its "
            f"ranked placements were measured {MIN_RUNS} times or more."
        )
    best, worst, diff = t.iloc[0], t.iloc[1], t.iloc[2]
    members = sorted(
        {m for label in (best.placement, worst.placement) for m in re.split(r"[ |+]+", label) if m}
    )

    def placed(r) -> str:
        return (
            f"{esc(r.placement)} (rank {int(r['rank'])}; predicted total slowdown {num(r.predicted_total, 2)} "
            f"[{num(r.predicted_low, 2)}, {num(r.predicted_high, 2)}], measured {num(r.measured_total, 2)} "
            f"over {int(r.runs)} runs)"
        )

    return (
        f"**The advice checked on measured placements of {', '.join(members)}.** Recommended among the "
        f"measured: {placed(best)}; worst ranked: {placed(worst)} (measured: the mean of its runs' totals). "
        f"Measured difference (recommended − worst, "
        f"runs as the unit, Welch's 95 % interval): {num(diff.difference, 2)} [{num(diff.difference_low, 2)}, "
        f"{num(diff.difference_high, 2)}]: {VERDICT_WORDS.get(diff.verdict, diff.verdict)}. "
        "results/stats/placement/advice-check-*.tsv."
    )
