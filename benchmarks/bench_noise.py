"""Where the pair study's noise lives, measured from any results tree (no runs): the evidence the
paired design (config phases, docs/statistics.md#paired-design) rests on.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_noise.py [RESULTS_DIR ...]

Per target and side (alone: Cases 1, 1u; concurrent: the *with* samples of 2, 3a, 3b), over the
cells' run means (log scale, so that a semivariance of 0.0036 is two runs about 6 % apart):
  lag_*     the median semivariance 1/2 (log m_i - log m_j)^2 of two runs of one cell, by the
            time between them (under 2 min, 2-10, over 10): growth with lag is drift
  iter_cv   consecutive iterations of one run: sd of their log difference / sqrt 2
  run_share the runs' share of a cell's variance (one-way random effects, moment estimate)
  top10     the share of the summed semivariance carried by the largest 10 % of run pairs
  r_steal   the correlation of an iteration's value (log, centred on its run) with the steal on
            the host, r_own_steal with the steal on its member's own CPUs, r_own with its own
            CPU use (where the telemetry has them); stolen: the share of iterations the steal
            rule left out (own_steal above descriptive.STEAL_LIMIT)
And, where the runs were phased, per target and case: the SD between runs of the run's
with/without log ratio (paired) against that of its with-mean against the mean of the Case 1
runs (unpaired) — what pairing removed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.stats.descriptive import STEAL_LIMIT

CELL = ["host", "runtime", "case", "target", "partner", "metric"]
ALONE = ("1", "1u")


def load(results: Path) -> pd.DataFrame:
    d = pd.read_csv(results / "parsed/pairs/samples.tsv", sep="\t", dtype={"case": str, "partner": str},
                    keep_default_na=False, na_values={"value": [""], "steal_cores": [""], "own_steal": [""], "own_cpu_cores": [""]})  # fmt: skip
    d = d[(d["status"] == "ok") & d["value"].notna() & (d["value"] > 0)].copy()
    if "phase" not in d:
        d["phase"] = ""
    d["phase"] = d["phase"].fillna("").astype(str)
    # A concurrent case's samples: its *with* iterations where phased, its overlap otherwise.
    keep = d["case"].isin(ALONE) | (d["in_overlap"].astype(str) == "True")
    d = d[keep | (d["phase"] == "without")]
    d["log"] = np.log(d["value"])
    d["side"] = np.where(d["case"].isin(ALONE), "alone", "concurrent")
    return d


def _semivariances(runs: pd.DataFrame) -> pd.DataFrame:
    out = []
    for _, g in runs.groupby(CELL):
        v, t = g["log"].to_numpy(), g["start"].to_numpy()
        for i in range(len(v)):
            for j in range(i + 1, len(v)):
                out.append((abs(t[i] - t[j]) / 60, 0.5 * (v[i] - v[j]) ** 2))
    return pd.DataFrame(out, columns=["lag_min", "semivariance"])


def _run_share(g: pd.DataFrame) -> float:
    """Between-run share of one cell's variance (balanced-ish one-way moment estimate)."""
    runs = g.groupby("repetition")["log"]
    k, n = runs.ngroups, runs.size().mean()
    if k < 2 or n < 2:
        return np.nan
    within = runs.var(ddof=1).mean()
    between = runs.mean().var(ddof=1) - within / n
    total = max(between, 0) + within
    return max(between, 0) / total if total > 0 else np.nan


def noise(d: pd.DataFrame) -> pd.DataFrame:
    d = d[d["phase"] != "without"]
    rows = []
    for (target, side), g in d.groupby(["target", "side"]):
        runs = g.groupby([*CELL, "repetition"]).agg(log=("log", "mean"), start=("start", "min")).reset_index()
        sv = _semivariances(runs)
        lag = {name: sv.loc[sv["lag_min"].between(lo, hi, inclusive="left"), "semivariance"]
               for name, lo, hi in (("lag_lt2", 0, 2), ("lag_2_10", 2, 10), ("lag_gt10", 10, np.inf))}  # fmt: skip
        srt = np.sort(sv["semivariance"].to_numpy())[::-1]
        top = srt[: max(1, len(srt) // 10)].sum() / srt.sum() if len(srt) and srt.sum() > 0 else np.nan
        its = g.sort_values("start").groupby([*CELL, "repetition"])["log"]
        diffs = its.diff().dropna()
        centred = g["log"] - g.groupby([*CELL, "repetition"])["log"].transform("mean")
        corr = {}
        for col in ("steal_cores", "own_steal", "own_cpu_cores"):
            x = pd.to_numeric(g.get(col), errors="coerce") if col in g else pd.Series(dtype=float)
            ok = x.notna() & (x.std() > 0) if len(x) else x
            corr[col] = float(np.corrcoef(centred[ok], x[ok])[0, 1]) if len(x) and ok.sum() > 2 else np.nan
        rows.append({
            "target": target, "side": side, "runs": len(runs),
            **{k: float(v.median()) * 1e4 if len(v) else np.nan for k, v in lag.items()},
            "pairs": len(sv), "iter_cv": float(diffs.std() / np.sqrt(2)) if len(diffs) > 1 else np.nan,
            "run_share": float(np.nanmedian([_run_share(c) for _, c in g.groupby(CELL)] or [np.nan])),
            "top10": top, "r_steal": corr["steal_cores"], "r_own_steal": corr["own_steal"],
            "r_own": corr["own_cpu_cores"],
            "stolen": float((pd.to_numeric(g["own_steal"], errors="coerce") > STEAL_LIMIT).mean()) if "own_steal" in g else np.nan,
        })  # fmt: skip
    return pd.DataFrame(rows)


def pairing(d: pd.DataFrame) -> pd.DataFrame:
    """Per target and case of the phased runs: SD between runs of the paired and unpaired log ratio."""
    ph = d[d["phase"].isin(["with", "without"])]
    if ph.empty:
        return pd.DataFrame()
    base = d[d["case"] == "1"].groupby(["host", "runtime", "target", "metric"])["log"].mean()
    per_run = ph.groupby([*CELL, "repetition", "phase"])["log"].mean().unstack("phase").dropna().reset_index()
    per_run["paired"] = per_run["with"] - per_run["without"]
    per_run["unpaired"] = per_run["with"] - per_run.set_index(
        ["host", "runtime", "target", "metric"]
    ).index.map(base)
    rows = []
    for (target, case), g in per_run.groupby(["target", "case"]):
        dev = g.groupby(CELL)[["paired", "unpaired"]].transform(lambda x: x - x.mean())
        dof = int((g.groupby(CELL).size() - 1).sum())
        if dof < 1:
            continue
        sd = np.sqrt((dev**2).sum() / dof)
        rows.append({"target": target, "case": case, "runs": len(g), "df": dof,
                     "sd_paired": sd["paired"], "sd_unpaired": sd["unpaired"]})  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="*", default=["results"], type=Path)
    a = ap.parse_args(argv)
    for results in a.results:
        d = load(results)
        print(f"## {results} ({len(d)} samples)\n")
        print("Semivariances x 1e4 (log scale); iter_cv, run_share, top10 as fractions.\n")
        print(noise(d).round(3).to_markdown(index=False))
        p = pairing(d)
        if not p.empty:
            print("\nSD between runs of the log ratio, pooled over partners (paired: with/without in one run;"
                  " unpaired: with against the Case 1 runs' mean):\n")  # fmt: skip
            print(p.round(4).to_markdown(index=False))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
