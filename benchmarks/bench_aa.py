"""The A/A test of the paired design: comparisons whose true effect is 0, run for real.

  PYTHONPATH=scripts .venv/bin/python benchmarks/bench_aa.py [--config config/aa.yaml] [--repeat 2]

Runs the config (phases with switch: false: nobody is held, the labels alone follow the schedule)
`repeat` times, each in a fresh folder, to its interference.tsv, and prints over every paired
cell's partner effect (true value 0) and the Case 3b IRs: the share of 95 % intervals that exclude
0 with its Clopper-Pearson interval (goal: at most 5 %), their median half-width, per case and
per level (runs, paired / blocks). The cells of one run share
its noise (the metrics of one microservice most of all), so the binomial interval is optimistic."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = REPO / ".venv/bin/snakemake"


def run_once(config: Path, folder: Path, cores: int) -> pd.DataFrame:
    target = "results/stats/pairs/interference.tsv"
    cmd = [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "-d", str(folder), "--configfile", str(config),
           "--cores", str(cores), target]  # fmt: skip
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return pd.read_csv(folder / target, sep="\t")


PARTNER = ("paired_partner_ci_low", "paired_partner_ci_high", "paired_partner_ir")


def _row(level: str, g: pd.DataFrame, low: str, high: str, estimate: str) -> dict:
    excl = int(((g[low] > 0) | (g[high] < 0)).sum())
    lo, hi = proportion_confint(excl, len(g), alpha=0.05, method="beta") if len(g) else (float("nan"),) * 2
    return {"level": level, "intervals": len(g), "exclude_0": excl, "share": excl / len(g) if len(g) else None,
            "share_ci": f"[{lo:.3f}, {hi:.3f}]",
            "median_half_width_points": 100 * ((g[high] - g[low]) / 2).median(),
            "median_abs_points": 100 * g[estimate].abs().median()}  # fmt: skip


def summary(t: pd.DataFrame) -> pd.DataFrame:
    """Over the paired cells: the partner's effect alone (partner_*: true value 0 in every case
    when nothing is switched), per case and per interval level; and the IR itself in Case 3b,
    where it is the partner's effect (in Cases 2 and 3a it also holds the limit's, not 0)."""
    rows = []
    if "paired_partner_ci_low" in t:  # tables made before the partner's effect had columns of its own
        partner = t.dropna(subset=["paired_partner_ci_low", "paired_partner_ci_high"])
        for name, g in [("all", partner), *((f"Case {c}", g) for c, g in partner.groupby("case")),
                        *partner.groupby("ci_level")]:  # fmt: skip
            rows.append(_row(f"partner effect, {name}", g, *PARTNER))
    three_b = t[t["ci_level"].astype(str).str.contains("paired") & (t["case"].astype(str) == "3b")]
    rows.append(_row("IR, Case 3b", three_b, "ir_ci_low", "ir_ci_high", "ir"))
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=REPO / "config/aa.yaml")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="write every repeat's interference rows here (TSV)")
    a = ap.parse_args(argv)
    tables = []
    for i in range(1, a.repeat + 1):
        start = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="aa-") as folder:
            t = run_once(a.config.resolve(), Path(folder), a.cores)
        t["repeat"] = i
        tables.append(t)
        print(f"repeat {i}: {len(t)} rows in {time.monotonic() - start:.0f} s", flush=True)
    every = pd.concat(tables, ignore_index=True)
    if a.keep:
        every.to_csv(a.keep, sep="\t", index=False)
    print(summary(every).round(4).to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
