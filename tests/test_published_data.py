"""Checks on the numbers transcribed from the published papers (report/published/), their units
and how the comparison with ours converts them."""

from pathlib import Path

import pandas as pd
import pytest
from interference.studies.pairs.statistics import ir_value, published

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
    # Every IR names a metric: one without would be dropped from the comparison.
    for _, r in irs.iterrows():
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


def test_rows_placed_by_position_are_those_the_text_quotes(means):
    # 002's Tables 3-7 were read by position (report/published/README.md); its text quotes some of
    # their cells by label, independently of the tables: section 5.1 gives SDs 1.753 (Case 2 L(+NS))
    # and 1.403 (Case 3a L(+S)) and a mean-median gap of 0.41 for Case 3a L(+S); section 5.3 gives
    # block-input SDs 25 319.8 (Case 2 B(+Y)) and 77 770.2 (Case 3b B(+Y)) with CVs 8.1 % and 24.8 %.
    quoted = [
        ("Table 3", "2", "L", "NS", "gflops", "sd", 1.753),
        ("Table 3", "3a", "L", "S", "gflops", "sd", 1.403),
        ("Table 4", "2", "B", "Y", "block_input", "sd", 25319.8),
        ("Table 4", "3b", "B", "Y", "block_input", "sd", 77770.2),
        ("Table 4", "2", "B", "Y", "block_input", "cv", 0.081),
        ("Table 4", "3b", "B", "Y", "block_input", "cv", 0.248),
    ]
    for source, case, target, partner, metric, column, value in quoted:
        r = _one(means, paper="002", source=source, case=case, target=target, partner=partner, metric=metric)
        assert float(r[column]) == pytest.approx(value), (source, case, target, partner, column)
    r = _one(means, paper="002", source="Table 3", case="3a", target="L", partner="S", metric="gflops")
    assert abs(float(r["mean"]) - float(r["median"])) == pytest.approx(0.41)


# -- units: every published mean in a unit the comparison converts ------------------------------


def test_every_unit_is_known_and_an_unknown_one_is_refused_naming_file_and_line(means, tmp_path):
    assert set(means["unit"]) <= set(published.UNITS)
    assert len(published.read_published(PUB, "means")) == len(means)  # the shipped tables load
    bad = means.head(3).copy()
    bad.loc[1, "unit"] = "Mb/sec"  # as 000's Table V prints it: MB or MiB?
    bad.to_csv(tmp_path / "means.tsv", sep="\t", index=False)
    with pytest.raises(ValueError, match=r"means\.tsv, line 3 .*unit 'Mb/sec' is unknown"):
        published.read_published(tmp_path, "means")


def ours(tmp_path, summary_rows, ir_rows=()) -> dict[str, Path]:
    """Our summary.tsv and interference.tsv with the given rows (host h, runtime docker)."""
    key = {"host": "h", "runtime": "docker"}
    summary = pd.DataFrame([{**key, **r, "n": 10, "sd": 1.0, "cv": 0.01} for r in summary_rows],
                           columns=["host", "runtime", "case", "target", "partner", "metric", "unit",
                                    "higher_is_better", "n", "mean", "sd", "cv"])  # fmt: skip
    ir = pd.DataFrame([{**key, **r} for r in ir_rows],
                      columns=["host", "runtime", "case", "target", "partner", "metric", "ir", "ir_ci_low",
                               "ir_ci_high"])  # fmt: skip
    paths = {"summary": tmp_path / "summary.tsv", "interference": tmp_path / "interference.tsv"}
    summary.to_csv(paths["summary"], sep="\t", index=False)
    ir.to_csv(paths["interference"], sep="\t", index=False)
    return paths


def test_000_bonnie_means_are_converted_from_mib_and_1024_seeks(tmp_path):
    base = {"case": "1", "target": "B", "partner": "", "higher_is_better": True}
    rows = [
        {**base, "metric": "block_input", "unit": "KiB/s", "mean": 174489.6},
        {**base, "metric": "random_seeks", "unit": "seeks/s", "mean": 5376.0},
    ]
    c = published.comparison(ours(tmp_path, rows), 1, published_dir=PUB)
    m = c[(c["comparison"] == "mean") & (c["paper"] == "000")].set_index("metric")
    # Table V, Case 1: block input 340.8 MiB/s = 340.8 × 1024 KiB/s = 348 979.2 KiB/s, and ours is
    # 174 489.6 KiB/s: here / paper = 174 489.6 / 348 979.2 = 0.5 (as MB/s, 1e6 B/s, it was 0.524).
    assert m.loc["block_input", "paper_mean"] == pytest.approx(348979.2)
    assert m.loc["block_input", "here_over_paper"] == pytest.approx(0.5)
    # Random seeks 10.5 in units of 1024/s = 10 752 seeks/s; ours 5376: here / paper = 0.5 (taken
    # as 10.5 seeks/s, it was 512).
    assert m.loc["random_seeks", "paper_mean"] == pytest.approx(10752.0)
    assert m.loc["random_seeks", "here_over_paper"] == pytest.approx(0.5)
    # The same cells of 002 (Tables 4 and 7, KiB/s and seeks/s) are not scaled: 348 948.7 and 10 801.3.
    m2 = c[(c["comparison"] == "mean") & (c["paper"] == "002")].set_index("metric")
    assert m2.loc["block_input", "paper_mean"] == pytest.approx(348948.7)
    assert m2.loc["random_seeks", "paper_mean"] == pytest.approx(10801.3)


def test_002s_y_cruncher_irs_are_compared_as_computation_time(tmp_path, irs):
    # The text's eleven Y IRs (section 5.1), all now with our metric computation_time.
    y = irs[(irs["paper"] == "002") & (irs["target"] == "Y")]
    assert len(y) == 11 and set(y["metric"]) == {"computation_time"}
    # Our IR of a time is (baseline - mean) / baseline: 10 s alone, 14.6 s beside L is
    # (10 - 14.6) / 10 = -0.46, a loss, as the paper's "degradation of almost 46 %" (-0.46).
    assert ir_value(14.6, 10.0, higher_is_better=False) == pytest.approx(-0.46)
    cells = list(zip(y["case"], y["partner"]))
    rows = [{"case": case, "target": "Y", "partner": partner, "metric": "computation_time", "ir": -0.46,
             "ir_ci_low": -0.5, "ir_ci_high": -0.4} for case, partner in cells]  # fmt: skip
    c = published.comparison(ours(tmp_path, [], rows), 1, published_dir=PUB)
    c = c[(c["comparison"] == "ir") & (c["target"] == "Y")]
    assert sorted(zip(c["case"], c["partner"])) == sorted(cells)
    assert set(c["ir_from"]) == {"text"} and set(c["metric"]) == {"computation_time"}
    yl = c[(c["case"] == "2") & (c["partner"] == "L")].iloc[0]
    assert yl["paper_ir"] == -0.46 and yl["verdict"] == "same sign, similar size" and yl["in_ci"]
    ns = c[(c["case"] == "2") & (c["partner"] == "NS")].iloc[0]
    assert ns["paper_ir"] == 0.024 and ns["verdict"] == "opposite sign"  # the paper: a 2.4 % gain
