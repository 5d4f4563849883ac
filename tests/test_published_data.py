"""Checks on the numbers transcribed from the published papers (report/published/)."""

from pathlib import Path

import pandas as pd
import pytest

PUB = Path(__file__).resolve().parents[1] / "report" / "published"

MEANS_COLS = [
    "paper",
    "source",
    "host",
    "case",
    "target",
    "partner",
    "metric",
    "unit",
    "higher_is_better",
    "mean",
    "median",
    "trimmed_mean",
    "max",
    "min",
    "sd",
    "cv",
]
IR_COLS = ["paper", "source", "host", "case", "target", "partner", "metric", "ir"]
STAT_COLS = ["mean", "median", "trimmed_mean", "max", "min", "sd", "cv"]

CASES = {"1", "2", "3a", "3b"}
PAPERS = {"000", "002", "004"}
MICROSERVICES = {"L", "S", "B", "NS", "NR", "Y"}
METRICS = {
    "L": {"gflops"},
    "S": {"copy", "scale", "add", "triad"},
    "B": {"block_input", "block_output", "block_rewrite", "random_seeks"},
    "NS": {"throughput"},
    "NR": {"transactions"},
    "Y": {"computation_time", "total_time"},
}
LOWER_IS_BETTER = {"computation_time", "total_time"}

# Rows whose printed CV disagrees with the printed SD/mean by more than 0.02 (the paper's own
# numbers), as (paper, source, case, target, partner, metric). None at present. Closest call:
# 002 Table 3, Case 3a L(+B): SD 1.177 / mean 15.49 = 0.076 vs printed CV 0.057 (off by 0.019,
# inside the tolerance; see report/published/README.md).
CV_EXCEPTIONS: set[tuple[str, ...]] = set()


def _load(name: str) -> pd.DataFrame:
    # Everything as text first, so "000", "3a" and empty cells survive unchanged.
    return pd.read_csv(PUB / name, sep="\t", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def means() -> pd.DataFrame:
    return _load("means.tsv")


@pytest.fixture(scope="module")
def irs() -> pd.DataFrame:
    return _load("interference_ratios.tsv")


def test_columns(means, irs):
    assert list(means.columns) == MEANS_COLS
    assert list(irs.columns) == IR_COLS
    assert len(means) > 0 and len(irs) > 0


@pytest.mark.parametrize("name", ["means", "irs"])
def test_keys(name, request):
    df = request.getfixturevalue(name)
    assert set(df["paper"]) <= PAPERS
    assert set(df["case"]) <= CASES, set(df["case"]) - CASES
    assert set(df["target"]) <= MICROSERVICES
    assert set(df.loc[df["partner"] != "", "partner"]) <= MICROSERVICES
    assert (df["source"] != "").all() and (df["host"] != "").all()


@pytest.mark.parametrize("name", ["means", "irs"])
def test_partner_empty_iff_case_1(name, request):
    df = request.getfixturevalue(name)
    bad = df[(df["case"] == "1") != (df["partner"] == "")]
    assert bad.empty, bad.to_string()


def test_means_metric_names_and_direction(means):
    for _, r in means.iterrows():
        assert r["metric"] in METRICS[r["target"]], (r["target"], r["metric"])
        assert r["unit"] != ""
        assert r["higher_is_better"] in {"True", "False"}
        expected = "False" if r["metric"] in LOWER_IS_BETTER else "True"
        assert r["higher_is_better"] == expected, r.to_dict()


def test_ir_metric_names(irs):
    for _, r in irs.iterrows():
        if r["metric"] == "":
            # Only allowed where paper 002's text gives a Y-Cruncher percentage without saying
            # whether it is computation time or total time.
            assert (r["paper"], r["target"]) == ("002", "Y") and r["source"].startswith("text"), r.to_dict()
        else:
            assert r["metric"] in METRICS[r["target"]], (r["target"], r["metric"])


def test_means_numeric(means):
    for c in STAT_COLS:
        vals = means.loc[means[c] != "", c]
        pd.to_numeric(vals, errors="raise")
        assert not vals.str.contains(r"\s").any(), f"thousands spaces left in {c}"
    assert (means["mean"] != "").all()


def test_ir_numeric(irs):
    ir = pd.to_numeric(irs["ir"], errors="raise")
    assert ir.notna().all()
    assert ((ir > -1) & (ir < 1)).all()


def test_means_unique(means):
    key = ["paper", "source", "host", "case", "target", "partner", "metric"]
    dup = means[means.duplicated(key, keep=False)]
    assert dup.empty, dup.to_string()


def test_cv_matches_sd_over_mean(means):
    num = means.copy()
    for c in ("mean", "sd", "cv"):
        num[c] = pd.to_numeric(num[c].replace("", None))
    full = num.dropna(subset=["mean", "sd", "cv"])
    assert len(full) > 0
    mismatches = set()
    for _, r in full.iterrows():
        if abs(r["sd"] / r["mean"] - r["cv"]) > 0.02:
            mismatches.add((r["paper"], r["source"], r["case"], r["target"], r["partner"], r["metric"]))
    assert mismatches == CV_EXCEPTIONS


def _one(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (kw, len(sel))
    return sel.iloc[0]


def test_spot_check_002_table3(means):
    base = _one(means, paper="002", source="Table 3", case="1", target="L", metric="gflops")
    assert base["partner"] == ""
    assert float(base["mean"]) == pytest.approx(19.17)
    ls = _one(means, paper="002", source="Table 3", case="2", target="L", partner="S", metric="gflops")
    assert float(ls["mean"]) == pytest.approx(23.81)
