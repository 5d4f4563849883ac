"""Which summary of a run's iterations the IR should rest on (issue 52, item 3), measured from
finished results trees (no runs): the mean (today's), the papers' 10–90 % trimmed mean and the
median, each run summarised to one value and the IR taken at the run level.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_run_summary.py NAME=RESULTS_DIR NAME=RESULTS_DIR ...

The run-level IR of a cell: exp(mean log run summary − mean log of the Case 1 runs') − 1 (in
relative_change's orientation), its 95 % interval t with Welch's degrees of freedom, each side's
variance the pooled variance of its runs' log summaries about their cell's mean over the target's
cells of that side (alone: Case 1; concurrent: 2, 3a, 3b). The pipeline's own IR (interference.tsv)
is printed beside it as `pipeline`. Per summary and tree: the median 95 % half-width over the
Case 2, 3a and 3b cells; per pair of trees: the mean and median |IR difference| and the share
of the second tree's IRs outside the first's interval (about 17 % when the intervals cover a
rerun, as bench_rerun.py says)."""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.stats.descriptive import trimmed_mean  # noqa: E402
from interference.studies.pairs.statistics import read_samples  # noqa: E402

SUMMARIES = {"mean": np.mean, "trimmed": trimmed_mean, "median": np.median}
CONCURRENT = ("2", "3a", "3b")
CELL = ["case", "target", "partner", "metric"]


def run_summaries(samples: pd.DataFrame, summary) -> pd.DataFrame:
    ok = samples[(samples["status"] == "ok") & samples["value"].notna()]
    ok = ok[ok["case"].isin(("1", *CONCURRENT)) & (ok["in_overlap"].astype(str) == "True")]
    runs = ok.groupby([*CELL, "repetition"]).agg(v=("value", summary), higher=("higher_is_better", "first"))
    runs = runs[runs["v"] > 0].reset_index()
    runs["log"] = np.log(runs["v"])
    runs["side"] = np.where(runs["case"] == "1", "alone", "concurrent")
    runs["dev"] = runs["log"] - runs.groupby(CELL)["log"].transform("mean")
    return runs


def pooled_variance(runs: pd.DataFrame) -> dict:
    out = {}
    for key, g in runs.groupby(["target", "metric", "side"]):
        df = int((g.groupby(["case", "partner"]).size() - 1).sum())
        out[key] = ((g["dev"] ** 2).sum() / df, df) if df > 0 else (math.nan, 0)
    return out


def run_level_irs(samples: pd.DataFrame, summary) -> pd.DataFrame:
    runs = run_summaries(samples, summary)
    var = pooled_variance(runs)
    base = runs[runs["side"] == "alone"]
    rows = []
    for (case, target, partner, metric), g in runs[runs["side"] == "concurrent"].groupby(CELL):
        b = base[(base["target"] == target) & (base["metric"] == metric)]
        (vx, dx), (vb, db) = (
            var[(target, metric, "concurrent")],
            var.get((target, metric, "alone"), (math.nan, 0)),
        )
        if b.empty or not (dx > 0 and db > 0):
            continue
        sx, sb = vx / len(g), vb / len(b)
        df = (sx + sb) ** 2 / (sx**2 / dx + sb**2 / db)
        d, h = g["log"].mean() - b["log"].mean(), stats.t.ppf(0.975, df) * math.sqrt(sx + sb)
        ratio, low, high = math.exp(d), math.exp(d - h), math.exp(d + h)
        higher = str(g["higher"].iloc[0]) == "True"
        ir, lo, hi = (ratio - 1, low - 1, high - 1) if higher else (1 - ratio, 1 - high, 1 - low)
        rows.append(dict(case=case, target=target, partner=partner, metric=metric, ir=ir, low=lo, high=hi))
    return pd.DataFrame(rows)


def pipeline_irs(results: Path) -> pd.DataFrame:
    t = pd.read_csv(results / "stats/pairs/interference.tsv", sep="\t", dtype={"case": str, "partner": str},
                    keep_default_na=False)  # fmt: skip
    t = t[t["case"].isin(CONCURRENT)].rename(columns={"ir_ci_low": "low", "ir_ci_high": "high"})
    for c in ("ir", "low", "high"):
        t[c] = pd.to_numeric(t[c], errors="coerce")
    return t[[*CELL, "ir", "low", "high"]].dropna()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+", help="NAME=RESULTS_DIR (a results folder with parsed/ and stats/)")
    args = ap.parse_args(argv)
    trees = dict(t.split("=", 1) for t in args.trees)
    irs = {}
    for name, root in trees.items():
        samples = read_samples(Path(root) / "parsed/pairs/samples.tsv")
        irs[name, "pipeline"] = pipeline_irs(Path(root))
        for s, fn in SUMMARIES.items():
            irs[name, s] = run_level_irs(samples, fn)
    methods = ["pipeline", *SUMMARIES]
    print("median 95 % half-width of the Case 2, 3a and 3b IRs (points; cells)")
    for name in trees:
        print(f"  {name}: " + "; ".join(
            f"{m} {50 * (irs[name, m].high - irs[name, m].low).median():.1f} ({len(irs[name, m])})" for m in methods
        ))  # fmt: skip
    print("two trees: mean |IR difference| (median) in points, the second's IRs outside the first's CI")
    for a, b in itertools.combinations(trees, 2):
        parts = []
        for m in methods:
            j = irs[a, m].merge(irs[b, m], on=CELL, suffixes=("_1", "_2"))
            d = 100 * (j["ir_1"] - j["ir_2"]).abs()
            out = ((j["ir_2"] < j["low_1"]) | (j["ir_2"] > j["high_1"])).mean()
            parts.append(f"{m} {d.mean():.1f} ({d.median():.1f}) {out:.0%}")
        print(f"  {a} / {b} ({len(j)} cells): " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
