"""The comparison with the published papers: results/stats/pairs/published.tsv.

Reads this run's summary.tsv and interference.tsv and the papers' tables in report/published/
(means.tsv, interference_ratios.tsv) and writes one row per compared quantity:

  comparison "ir"    a published IR beside ours: printed in a table, else computed from the
                     paper's tabulated means against its Case 1 row, else stated in its text (in
                     that order of preference); direction, size ratio, whether the paper's value
                     lies in our CI, a verdict
  comparison "mean"  a published mean beside ours, converted to our unit where both measure
                     one quantity (UNITS; for scale only: the hardware differs)

The thresholds of the verdicts are NEGLIGIBLE_IR and SIMILAR_FACTOR; the report states them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.core.table_schema import FLAG
from interference.stores.stats_tables import read_tsv
from interference.studies.pairs import PUBLISHED_DIR, schemas
from interference.studies.pairs.cases import CASES
from interference.studies.pairs.statistics import NUMERIC_COLUMNS

NEGLIGIBLE_IR = 0.02  # |IR| below this counts as "no interference" when comparing directions
SIMILAR_FACTOR = 2.0  # same sign and within this factor of the paper's |IR|: similar size
KEY = ["case", "target", "partner", "metric"]
# Declared with their kinds in ../schemas.py (both kinds of row in one table).
COLUMNS = schemas.PUBLISHED.columns
BOOL_COLUMNS = tuple(schemas.PUBLISHED.of(FLAG))
NUMERIC = schemas.PUBLISHED.numeric

# Every unit a published mean may be in: unit -> (quantity, value in unit × factor = value in the
# quantity's base unit). A transcription records the unit its numbers are in, not the label the
# paper printed (report/published/README.md): read_published refuses any other unit. Printed
# labels such as "Mb/sec" or "K/sec" are not units here: they are ambiguous (Bonnie++'s K/sec is KiB/s).
UNITS = {
    "GFLOPS": ("flops", 1e9), "MFLOPS": ("flops", 1e6), "FLOPS": ("flops", 1.0),
    "GB/s": ("bytes/s", 1e9), "MB/s": ("bytes/s", 1e6), "KB/s": ("bytes/s", 1e3), "kB/s": ("bytes/s", 1e3),
    "GiB/s": ("bytes/s", 1024**3), "MiB/s": ("bytes/s", 1024**2), "KiB/s": ("bytes/s", 1024.0),
    "B/s": ("bytes/s", 1.0),
    "Gbit/s": ("bytes/s", 1e9 / 8), "Gbps": ("bytes/s", 1e9 / 8), "Mbit/s": ("bytes/s", 1e6 / 8),
    "Mbps": ("bytes/s", 1e6 / 8), "Kbit/s": ("bytes/s", 1e3 / 8),
    # Paper 000's Table V prints seeks as "/sec" but in units of 1024 seeks/s (its values are 002's
    # Table 7 divided by 1024; report/published/README.md).
    "seeks/s": ("seeks/s", 1.0), "Ki seeks/s": ("seeks/s", 1024.0),
    "s": ("time", 1.0), "ms": ("time", 1e-3),
}  # fmt: skip


def unit_factor(paper_unit: str, our_unit: str) -> float:
    """What a value in paper_unit is multiplied by to be in our_unit; NaN if they measure different
    quantities (or ours is not in UNITS)."""
    if paper_unit == our_unit:
        return 1.0
    paper, ours = UNITS.get(paper_unit), UNITS.get(our_unit)
    if paper and ours and paper[0] == ours[0]:
        return paper[1] / ours[1]
    return np.nan


def read_published(published_dir: Path, name: str) -> pd.DataFrame:
    p = Path(published_dir) / f"{name}.tsv"
    if not p.exists():
        return pd.DataFrame()
    numeric = {
        "means": ["mean", "median", "trimmed_mean", "max", "min", "sd", "cv"],
        "interference_ratios": ["ir"],
    }
    df = read_tsv(p, numeric[name])
    if "unit" in df:
        unknown = df[~df["unit"].isin(list(UNITS))]
        if len(unknown):
            i, r = next(unknown.iterrows())  # row i is the file's line i + 2 (the header is line 1)
            cell = f"case {r['case']} {r['target']}" + (f"(+{r['partner']})" if r["partner"] else "")
            raise ValueError(
                f"{p}, line {i + 2} ({r['paper']} {r['source']}, {cell} {r['metric']}): "
                f"unit {r['unit']!r} is unknown, so its values cannot be set beside ours. Write the unit "
                f"its numbers are in, one of: {', '.join(UNITS)}."
            )
    if "partner" in df:
        df["partner"] = df["partner"].replace({"NA": "", "-": ""})
    return df


def published_ir(pub_ir: pd.DataFrame, pub_means: pd.DataFrame) -> pd.DataFrame:
    """One IR per paper and combination: printed in a table, else computed from the paper's
    tabulated means (its Case 1 row as the baseline), else stated in its text."""
    cols = ["paper", "source", *KEY, "ir", "ir_from"]
    out = []
    if len(pub_ir):
        out.append(pub_ir.assign(ir_from="printed").reindex(columns=cols))
    if len(pub_means):
        base = pub_means[pub_means["case"] == "1"].set_index(["paper", "target", "metric"])["mean"]
        base = base[~base.index.duplicated()]
        rows = []
        for _, r in pub_means[pub_means["case"] != "1"].iterrows():
            b = base.get((r["paper"], r["target"], r["metric"]), np.nan)
            if pd.isna(r["mean"]) or pd.isna(b) or b == 0:
                continue
            sign = 1 if bool(r.get("higher_is_better", True)) else -1
            rows.append({**{k: r[k] for k in ["paper", "source", *KEY]},
                         "ir": sign * (r["mean"] - b) / b, "ir_from": "the paper's means"})  # fmt: skip
        if rows:
            out.append(pd.DataFrame(rows, columns=cols))
    if not out:
        return pd.DataFrame(columns=cols)
    allp = pd.concat(out, ignore_index=True)
    allp = allp[allp["metric"].fillna("") != ""]
    from_table = allp["source"].fillna("").str.lower().str.startswith("table")
    allp["ir_from"] = np.where(
        allp["ir_from"] == "printed", np.where(from_table, "printed", "text"), allp["ir_from"]
    )
    rank = {"printed": 0, "the paper's means": 1, "text": 2}
    allp = allp.assign(_pri=allp["ir_from"].map(rank)).sort_values("_pri", kind="stable")
    return allp.drop_duplicates(["paper", *KEY]).drop(columns="_pri")


def direction(ir) -> int:
    if pd.isna(ir):
        return 0
    return 0 if abs(ir) < NEGLIGIBLE_IR else (1 if ir > 0 else -1)


def _times(x: float, digits: int) -> str:
    return f"{x:,.{digits}f}".replace(",", "\u2009")


def verdict(r) -> str:
    if r["direction_paper"] == 0 and r["direction"] == 0:
        return "both negligible"
    if r["direction_paper"] == 0:
        return "paper negligible, not here"
    if r["direction"] == 0:
        return "negligible here"
    if r["direction_paper"] != r["direction"]:
        return "opposite sign"
    if r["ratio"] > SIMILAR_FACTOR:
        return f"same sign, {_times(r['ratio'], 1)}× stronger here"
    if r["ratio"] < 1 / SIMILAR_FACTOR:
        return f"same sign, {_times(r['ratio'], 2)}× as strong here"
    return "same sign, similar size"


def ir_rows(pub: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    m = pub.merge(ours.dropna(subset=["ir"]), on=KEY, suffixes=("_paper", ""))
    if m.empty:
        return pd.DataFrame(columns=COLUMNS)
    m = m.rename(columns={"ir_paper": "paper_ir"})
    m["direction_paper"] = m["paper_ir"].map(direction)
    m["direction"] = m["ir"].map(direction)
    m["direction_agrees"] = m["direction_paper"] == m["direction"]
    m["ratio"] = np.where(m["paper_ir"].abs() > 0, m["ir"].abs() / m["paper_ir"].abs(), np.nan)
    m["in_ci"] = (m["ir_ci_low"] <= m["paper_ir"]) & (m["paper_ir"] <= m["ir_ci_high"])
    m["verdict"] = m.apply(verdict, axis=1)
    return m.assign(comparison="ir").reindex(columns=COLUMNS)


def mean_rows(pub_means: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    j = pub_means.drop(columns=["host"], errors="ignore").merge(summary, on=KEY, suffixes=("_paper", ""))
    if j.empty:
        return pd.DataFrame(columns=COLUMNS)

    f = np.array([unit_factor(pu, ou) for pu, ou in zip(j["unit_paper"], j["unit"])], dtype=float)
    paper_mean = j["mean_paper"] * f
    out = j.assign(
        comparison="mean",
        paper_unit=j["unit_paper"],
        paper_mean_printed=j["mean_paper"],
        paper_mean=paper_mean,
        here_over_paper=np.where(paper_mean.notna() & (paper_mean != 0), j["mean"] / paper_mean, np.nan),
        paper_cv=j["cv_paper"].where(j["cv_paper"].notna(), j["sd_paper"] / j["mean_paper"]),
        paper_cv_from=np.where(
            j["cv_paper"].notna(), "printed", np.where(j["sd_paper"].notna(), "sd/mean", "")
        ),
    )
    return out.reindex(columns=COLUMNS)


def _order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows by paper, target, metric, case and partner (Case 1 first)."""
    case = {c: i for i, c in enumerate(CASES)}
    return (
        df.assign(_c=df["case"].map(case), _p=df["partner"].fillna(""))
        .sort_values(
            ["comparison", "paper", "host", "runtime", "target", "metric", "_c", "_p"], kind="stable"
        )
        .drop(columns=["_c", "_p"])
        .reset_index(drop=True)
    )


def comparison(inputs: dict[str, Path], jobs: int = 1, published_dir: Path = PUBLISHED_DIR) -> pd.DataFrame:
    """The rows of published.tsv (COLUMNS); none when no published table is there."""
    summary = read_tsv(inputs["summary"], NUMERIC_COLUMNS["summary"])
    ours = read_tsv(inputs["interference"], NUMERIC_COLUMNS["interference"])
    pub_ir = read_published(published_dir, "interference_ratios")
    pub_means = read_published(published_dir, "means")
    parts = []
    pub = published_ir(pub_ir, pub_means)
    if len(pub) and len(ours):
        parts.append(ir_rows(pub.drop(columns=["host"], errors="ignore"), ours))
    if len(pub_means) and len(summary):
        parts.append(mean_rows(pub_means, summary))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    return _order(pd.concat(parts, ignore_index=True))


def read(path: Path) -> pd.DataFrame:
    """published.tsv as the report reads it (numbers numeric, flags boolean)."""
    return read_tsv(path, NUMERIC, flags=("higher_is_better", *BOOL_COLUMNS))
