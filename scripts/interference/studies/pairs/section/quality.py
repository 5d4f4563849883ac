"""Data quality: samples left out (outside the overlap, failed), runs with failures or events,
high variation, the statistics step's notes, small baselines, and the limits read back."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import and_list, esc, num, pct, plural
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import ALONE_CASES
from interference.studies.pairs.section.data import CASE_NAME, CV_FLAG, PairsData
from interference.studies.pairs.section.page_cache import PageCache

DRIFT_NUMERIC = schemas.DRIFT.numeric
SMALL_TABLE = {"group_first": True, "table_class": "rpt-table rpt-small"}


class Quality:
    """Samples left out, failures, variation, notes, drift, stopping and limits read back."""

    def __init__(self, data: PairsData, page_cache: PageCache):
        self.data = data
        self.page_cache = page_cache  # its Bonnie++ evidence is one of the quality notes

    def quality_blocks(self) -> list[Block]:
        s = self.data.summary
        # Tables made before the steal rule have no n_excluded_steal.
        stolen = int(s["n_excluded_steal"].sum()) if "n_excluded_steal" in s else 0
        total = int(s["n"].sum() + s["n_excluded_overlap"].sum() + s["n_excluded_failed"].sum()) + stolen
        out_ov = int(s["n_excluded_overlap"].sum())
        failed = int(s["n_excluded_failed"].sum())
        text = (
            f"**Samples left out.** Of {total} samples (one metric value of one iteration), "
            f"{out_ov} ({pct(out_ov / total if total else 0, 1, sign=False)}) lie outside the overlap window and "
            f"{failed} ({pct(failed / total if total else 0, 1, sign=False)}) failed. An iteration outside the overlap "
            f"started before both members of its pair were running, or ended after one had stopped, so it ran partly "
            f"alone; a failed one exited non-zero, was killed (out of memory), timed out, or gave no parsable value. "
            f"Neither enters any statistic."
        )
        if stolen:
            text += (
                f" {stolen} more ({pct(stolen / total, 1, sign=False)}) ran while the hypervisor took more of "
                f"their member's own CPUs than the steal rule allows (docs/statistics.md), and are left out too."
            )
        if len(self.data.runs):
            it, ov, fl = (int(self.data.runs[c].sum()) for c in ("n_iterations", "n_in_overlap", "n_failed"))
            text += f" Counted in iterations: {it} ran, {ov} inside the overlap (Case 1: all), {fl} failed."
        blocks = [md(text)]
        blocks += (
            self.excluded_blocks()
            + self.failed_run_blocks()
            + self.variation_blocks()
            + self.page_cache.page_cache_blocks()
            + self.note_blocks()
        )
        small = s[(s["case"] == "1") & (s["n"] < 10)]
        if len(small):
            blocks.append(
                md(
                    f"**Small baselines.** The Case 1 baseline of {and_list(sorted(set(small['target'])))} has only "
                    f"{and_list(sorted({int(x) for x in small['n']}))} samples: every IR of it inherits that uncertainty."
                )
            )
        return blocks + self.stopping_blocks() + self.drift_blocks() + self.limits_blocks()

    def drift_blocks(self) -> list[Block]:
        """Case 1 re-measured after every other run (config drift_check) against the first."""
        d = self.data.doc.stats.table("pairs", "drift", DRIFT_NUMERIC)
        if d.empty:
            return [
                md("**Drift.** Not measured (config `drift_check` off): the baselines were measured once.")
            ]
        moved = d[(d["change_ci_low"] > 0) | (d["change_ci_high"] < 0)]
        rows = [
            [self.data.name(x.target) + self.data.setup_suffix(x.host, x.runtime), x.metric, num(x.first_mean),
             num(x.end_mean), f"{num(x.first_n, 0)} / {num(x.end_n, 0)}", num(x.hours_between * 60),
             pct(x.change, 1), f"{pct(x.change_ci_low, 1)} to {pct(x.change_ci_high, 1)}",
             f"{num(x.first_steal_cores, 3)} / {num(x.end_steal_cores, 3)}"]
            for x in d.itertuples(index=False)
        ]  # fmt: skip
        size = d["change"].abs()
        text = (
            f"**Drift.** Each Case 1 baseline was measured again after all other runs of its runtime. The change "
            f"of its mean since the first measurement (negative: worse at the end) is at most "
            f"{pct(size.max(), 1, sign=False)} in size (median {pct(size.median(), 1, sign=False)}); "
            + (
                f"{plural(len(moved), 'metric')} of {len(d)} changed with a 95 % CI that excludes 0 "
                f"({esc(and_list(sorted({f'{x.target} {x.metric}' for x in moved.itertuples()})))}): an IR of "
                "that size or smaller there may be the machine's drift rather than interference."
                if len(moved)
                else f"no CI of the {len(d)} excludes 0: no drift detected at this precision."
            )
        )
        return [
            md(text),
            self.data.table(
                [
                    "Microservice",
                    "Metric",
                    "First",
                    "At the end",
                    "n",
                    "Minutes apart",
                    "Change",
                    "95 % CI",
                    "Steal first / end",
                ],
                rows,
                "The baselines measured at the start (their place in the run order) and again at the end "
                "(results/stats/pairs/drift.tsv; bootstrap CI as for the IR); steal: the CPUs' worth of time the "
                "hypervisor ran others on this machine's CPUs during each (telemetry; – without it).",
                numeric_from=2,
                **SMALL_TABLE,
            ),
        ]

    def stopping_blocks(self) -> list[Block]:
        """What the adaptive stopping rules decided, run by run (config adaptive)."""
        r = self.data.runs
        if r.empty or "stopped_by" not in r or not (r["stopped_by"].astype(str).str.len() > 0).any():
            return [md("**Repetitions.** Fixed counts: `iterations` Case 1 iterations and `window_s` windows "
                       "(no adaptive stopping rule configured).")]  # fmt: skip
        r = r[r["stopped_by"].astype(str).str.len() > 0]
        rows = [
            [x.host, x.runtime, CASE_NAME.get(x.case, x.case), x.pair, x.stopped_by,
             num(x.n_iterations, 0) if x.case in ALONE_CASES else num(x.n_in_overlap, 0),
             pct(x.ci_half_width_max, 2, sign=False) if x.case in ALONE_CASES else "–",
             num(x.window_final_s, 0) if x.case not in ALONE_CASES else "–",
             num(x.window_extended_s, 0) if x.case not in ALONE_CASES else "–"]
            for x in r.itertuples(index=False)
        ]  # fmt: skip
        rules = sorted(set(r["stopping_rule"]))
        return [
            md(f"**Repetitions.** Adaptive stopping rules: {esc(and_list(rules))}."),
            self.data.table(
                ["Host", "Runtime", "Case", "Pair", "Stopped by", "Samples", "Widest CI ±", "Window (s)",
                 "Extended by (s)"],
                rows,
                "Each run's stopping decision: Case 1's iterations and the widest relative 95 % CI half-width "
                "of its metrics' means when it stopped; a concurrent run's in-overlap iterations and its window "
                "(results/stats/pairs/runs.tsv).",
                numeric_from=5,
                **SMALL_TABLE,
            ),
        ]  # fmt: skip

    def excluded_blocks(self) -> list[Block]:
        s = self.data.summary
        ex = s[(s["n_excluded_overlap"] > 0) | (s["n_excluded_failed"] > 0)]
        if not len(ex):
            return []
        # One iteration gives a sample of every metric of its target: per group, the largest
        # count over the metrics is the number of iterations left out.
        g = (
            ex.groupby(["host", "runtime", "case", "target", "partner"], sort=False)
            .agg(n_min=("n", "min"), n_max=("n", "max"), outside=("n_excluded_overlap", "max"),
                 failed=("n_excluded_failed", "max"))
            .reset_index()
        )  # fmt: skip
        rows = [
            [CASE_NAME.get(r["case"], r["case"]), self.data.label(r["target"], r["partner"]) + self.data.setup_suffix(r["host"], r["runtime"]),
             num(r["n_max"], 0) if r["n_min"] == r["n_max"] else f"{num(r['n_min'], 0)}–{num(r['n_max'], 0)}",
             num(r["outside"], 0), num(r["failed"], 0)]
            for _, r in self.data.sort_rows(g).iterrows()
        ]  # fmt: skip
        return [
            self.data.table(
                ["Case", "Target(+partner)", "Counted", "Outside overlap", "Failed"],
                rows,
                f"{plural(len(rows), 'group')} with iterations left out (per iteration, over the target's metrics).",
                numeric_from=2,
                **SMALL_TABLE,
            )
        ]

    def failed_run_blocks(self) -> list[Block]:
        r = self.data.runs
        if not len(r):
            return []
        r = r[(r["n_failed"] > 0) | (r["events"].fillna("") != "")]
        if not len(r):
            return []
        listed = "; ".join(
            f"{CASE_NAME.get(x['case'], x['case'])} {x['pair']}{self.data.setup_suffix(x['host'], x['runtime'])}: "
            f"{num(x['n_failed'], 0)} failed" + (f" ({x['events']})" if x["events"] else "")
            for _, x in r.iterrows()
        )
        return [md(f"**Runs with failures or events:** {listed}.")]

    def variation_blocks(self) -> list[Block]:
        s = self.data.summary
        limit = pct(CV_FLAG, 0, sign=False)
        cv = self.data.sort_rows(s[s["cv"] > CV_FLAG])
        if not len(cv):
            return [md(f"**Variation.** No group has a coefficient of variation above {limit}.")]
        rows = [
            [CASE_NAME.get(r["case"], r["case"]), self.data.label(r["target"], r["partner"]) + self.data.setup_suffix(r["host"], r["runtime"]),
             r["metric"], num(r["n"], 0), num(r["mean"]), num(r["median"]), num(r["cv"], 3)]
            for _, r in cv.iterrows()
        ]  # fmt: skip
        return [
            md(
                f"**High variation.** {plural(len(cv), 'group')} of {len(s)} have a coefficient of variation "
                f"above {limit}; for them the median and trimmed mean are the more robust averages (both are in "
                f"the result tables)."
            ),
            self.data.table(
                ["Case", "Target(+partner)", "Metric", "n", "Mean", "Median", "CV"],
                rows,
                f"Groups with CV above {limit}.",
                numeric_from=3,
                cell_class=lambda i, j: "flag-cell" if j == 6 else "",
                **SMALL_TABLE,
            ),
        ]

    def note_blocks(self) -> list[Block]:
        """The statistics step's notes: why an interval is missing or may be too narrow."""
        notes = {}
        for df, col, what in (
            (self.data.summary, "note", "summary"),
            (self.data.ir, "reason", "interference ratio"),
        ):
            if col in df:
                for v in df[col].fillna(""):
                    for part in [p.strip() for p in str(v).split(";") if p.strip()]:
                        notes[(what, part)] = notes.get((what, part), 0) + 1
        if not notes:
            return []
        listed = "\n".join(
            f"- {what}, {plural(n, 'group')}: {esc(note)}" for (what, note), n in sorted(notes.items())
        )
        return [md("**Notes of the statistics step:**\n\n" + listed)]

    def limits_blocks(self) -> list[Block]:
        if not len(self.data.runs):
            return []
        # Member 1 of every run, then member 2 (the runs' order within each).
        m = self.data.members.sort_values("member", kind="stable")
        bad = m[~m["limits_match"].fillna("").isin(["yes", "unlimited", ""])]
        mism = [
            f"{CASE_NAME[x['case']]} {x['pair']} member {x['member']}: {x['limits_match']}"
            for _, x in bad.iterrows()
        ]
        limited = int((m["limits_match"] == "yes").sum())
        text = (
            f"Every limited container ({plural(limited, 'member record')}) read back exactly the cgroup limits requested."
            if not mism
            else "Limits read back differ from those requested: " + "; ".join(mism) + "."
        )
        return [md("**Limits.** " + text)]
