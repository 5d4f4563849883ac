"""Measures the false-alarm rate of the session comparison: the same config run K times in a
row on this machine (nothing changed between them), each saved as a session, and every later
session compared with all before it (changes.py: from two earlier sessions on, the CIs carry the
variance between sessions). Every `changed` verdict is a false alarm.

  python benchmarks/bench_sessions.py [--sessions 4] [--config FILE] [--threshold 0.05]

The default config is the default study's Case 1 (the six baselines, its sizes and iterations):
a few minutes per session. Prints each comparison's verdict counts, the false-alarm rate over
all cells, and per metric the smallest change that would count (the threshold plus the CI's
half-width, median over cells)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from interference.steps.changes import verdict

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def default_case1() -> dict:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    pairs = cfg["studies"]["pairs"]
    pairs.update(cases=["1"], drift_check=False)
    pairs.pop("pairs", None)
    return cfg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--config", type=Path)
    ap.add_argument("--threshold", type=float, default=0.05)
    a = ap.parse_args()
    env = {"PYTHONPATH": str(REPO / "scripts")}
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as tmp:
        tmp = Path(tmp)
        config = a.config or tmp / "case1.yaml"
        if not a.config:
            config.write_text(yaml.safe_dump(default_case1()))
        work, saved = tmp / "work", []
        for k in range(1, a.sessions + 1):
            shutil.rmtree(work / "results", ignore_errors=True)
            t0 = time.perf_counter()
            subprocess.run(
                [str(SNAKEMAKE), "--cores", "2", "-s", str(REPO / "Snakefile"), "-d", str(work), "stats",
                 "--configfile", str(config)],
                check=True, capture_output=True,
            )  # fmt: skip
            out = tmp / f"s{k}.tar.gz"
            subprocess.run(
                [sys.executable, "-m", "interference.stores.sessions", "save", f"s{k}", "--results", str(work / "results"),
                 "--out", str(out)],
                check=True, capture_output=True, env=env,
            )  # fmt: skip
            # Its tables and samples, kept to compare it with the first.
            keep = tmp / f"results{k}"
            shutil.copytree(work / "results", keep, ignore=shutil.ignore_patterns("raw", "logs"))
            saved.append((out, keep))
            print(f"session s{k}: {time.perf_counter() - t0:.0f} s", flush=True)
        frames = []
        for k, (_, results) in enumerate(saved[1:], start=2):
            earlier = [str(path) for path, _ in saved[: k - 1]]
            out = tmp / f"changes{k}.tsv"
            subprocess.run(
                [sys.executable, "-m", "interference.steps.changes", "--study", "pairs",
                 "--samples", str(results / "parsed/pairs/samples.tsv"),
                 "--summary", str(results / "stats/pairs/summary.tsv"),
                 "--environment", str(results / "stats/environment.json"),
                 "--sessions", *earlier, "--threshold", str(a.threshold), "--out", str(out)],
                check=True, env=env,
            )  # fmt: skip
            df = pd.read_csv(out, sep="\t")
            print(f"s{k} against s1..s{k - 1}: {df['verdict'].value_counts().to_dict()}")
            for _, r in df[df["verdict"] == "changed"].iterrows():
                print(
                    f"  changed: {r['cell']} {r['change']:+.1%} [{r['change_ci_low']:+.1%}, {r['change_ci_high']:+.1%}]"
                )
            frames.append(df)
    d = pd.concat(frames, ignore_index=True)
    alarms = int((d["verdict"] == "changed").sum())
    print(
        f"false alarms: {alarms} of {len(d)} cell comparisons ({alarms / len(d):.1%}) at threshold {a.threshold:.0%}"
    )
    for pooled, g in d.groupby("sessions_pooled"):
        n = int((g["verdict"] == "changed").sum())
        level = "one session: runs and iterations" if pooled == 1 else f"between {pooled} sessions too"
        print(f"  CIs over {level}: {n} of {len(g)} ({n / len(g):.1%})")
    for t in (0.10, 0.15, 0.20):  # the same intervals judged against wider thresholds
        n = sum(verdict(lo, hi, t) == "changed" for lo, hi in zip(d["change_ci_low"], d["change_ci_high"]))
        print(f"  at threshold {t:.0%}: {n} of {len(d)} ({n / len(d):.1%})")
    d["detectable"] = d["threshold"] + (d["change_ci_high"] - d["change_ci_low"]) / 2
    per_metric = d.groupby(["target", "metric"])["detectable"].median().mul(100).round(1)
    print("smallest change that counts, per metric (median over cells, %):")
    print(per_metric.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
