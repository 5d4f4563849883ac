"""Unit tests of the report's parts: the run collector (run_info), the renderer's reading of the
.qmd (render_report), and the generated numbers and verdicts (reporting)."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from interference import render_report, run_info
from interference.studies.pairs import report as reporting
from report_fixture import make_fixture

PUBLISHED = REPO / "tests" / "fixtures" / "published"


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    return make_fixture(tmp_path_factory.mktemp("stats"), n_resamples=200)


@pytest.fixture(scope="module")
def rep(stats):
    return reporting.Report(stats, PUBLISHED, renderer="test")


# -- run_info ------------------------------------------------------------------------------------


def test_memory_notation():
    assert run_info.memory_bytes("1g") == 1024**3
    assert run_info.memory_bytes("512m") == 512 * 1024**2
    assert run_info.memory_bytes("1073741824") == 1024**3
    assert run_info.memory_bytes("max") is None
    assert run_info.memory_bytes(None) is None


def test_limits_match():
    back = {"cpuset": "0", "memory_max": "1073741824", "cpu_quota_us": "-1", "cpu_period_us": "100000"}
    assert run_info.limits_match({"cpuset": "0", "memory": "1g"}, back) == "yes"
    assert "cpuset 1 read 0" in run_info.limits_match({"cpuset": "1", "memory": "1g"}, back)
    assert "memory 2g" in run_info.limits_match({"cpuset": "0", "memory": "2g"}, back)
    quota = {"cpu_quota_us": "100000", "cpu_period_us": "100000"}
    assert run_info.limits_match({"cpus": 1.0}, quota) == "yes"
    assert run_info.limits_match({"cpus": 2.0}, quota).startswith("cpus 2.0")
    assert run_info.limits_match({"cpuset": None, "cpus": None, "memory": None}, back) == "unlimited"


def test_runs_table_has_one_row_per_run_with_limits_per_member(stats):
    runs = pd.read_csv(stats / "runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    # 3 microservices alone + 6 pairs in each of 3 concurrent cases.
    assert len(runs) == 3 + 3 * 6
    r = runs[(runs["case"] == "3b") & (runs["pair"] == "L+S")].iloc[0]
    assert (r["member1_requested_cpuset"], r["member2_requested_cpuset"]) == ("0", "1")
    assert (r["member1_read_cpuset"], r["member2_read_cpuset"]) == ("0", "1")
    assert r["member1_limits_match"] == r["member2_limits_match"] == "yes"
    case2 = runs[(runs["case"] == "2") & (runs["pair"] == "L+S")].iloc[0]
    assert case2["member1_container"] == case2["member2_container"] == "member1+member2"
    assert case2["member1_limits_match"] == "unlimited"
    assert float(r["overlap_s"]) > 0 and r["window_s"] == "60"
    assert runs["n_failed"].astype(int).sum() == 2


def test_environment_records_host_engine_config_hash_and_declarations(stats, tmp_path):
    env = json.loads((stats / "environment.json").read_text())
    assert env["hosts"]["fixturehost"]["cores"] == 2
    assert env["engines"]["docker"]["cgroup_version"] == "1"
    assert env["config_sha256"] == run_info.sha256_of(env["config"])
    assert env["microservices"]["L"]["resource"] == "CPU"
    assert env["microservices"]["B"]["stand_in_reason"]
    config = tmp_path / "c.yaml"
    config.write_text("microservices: [L]\n")
    e = run_info.environment([], [], {"microservices": ["L"]}, [config])
    assert e["config_files"][0]["sha256"] == run_info.file_sha256(config)
    assert e["microservices"]["L"]["in_config"] is True


def test_config_hash_changes_with_the_config():
    assert run_info.sha256_of({"a": 1, "b": [1, 2]}) == run_info.sha256_of({"b": [1, 2], "a": 1})
    assert run_info.sha256_of({"a": 1}) != run_info.sha256_of({"a": 2})


# -- render_report: reading the .qmd ---------------------------------------------------------------


def test_front_matter_and_cell_options():
    front, body = render_report.split_front_matter("---\ntitle: T\nexecute:\n  echo: false\n---\n\n# H\n")
    assert front == {"title": "T", "execute": {"echo": False}} and body.strip() == "# H"
    opts, code = render_report.cell_options("#| echo: false\n#| tags: [parameters]\nx = 1\n")
    assert opts == {"echo": False, "tags": ["parameters"]} and code == "x = 1"


def test_qmd_cells_get_removal_tags_and_injected_parameters():
    text = (REPO / "report" / "paper.qmd").read_text()
    front, nb = render_report.qmd_to_notebook(text, {"stats_dir": "/s", "renderer": "r"})
    assert front["format"]["html"]["embed-resources"] is True
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = next(i for i, c in enumerate(code) if "parameters" in c.metadata["tags"])
    injected = code[params + 1]
    assert "injected-parameters" in injected.metadata["tags"]
    assert "stats_dir = '/s'" in injected.source and "renderer = 'r'" in injected.source
    # execute: echo: false (the injected cell is removed whole)
    assert all("remove_input" in c.metadata["tags"] for c in code if c is not injected)
    assert any("remove_cell" in c.metadata["tags"] for c in code)  # include: false
    assert not any(c.cell_type == "raw" for c in nb.cells)  # front matter is not a cell


def test_external_resources_are_found():
    page = (
        '<html><head><script src="https://cdn.example/x.js"></script>'
        '<link rel="stylesheet" href="//cdn.example/a.css">'
        "<style>/* https://in.a.comment */ .a { background: url('http://x.example/i.png') }</style>"
        '</head><body><a href="https://example.org">a link is no request</a>'
        '<img src="data:image/png;base64,AAAA"></body></html>'
    )
    found = render_report.external_resources(page)
    assert len(found) == 3
    assert not any("in.a.comment" in f or "example.org" in f for f in found)


def test_toc_links_every_section():
    page = '<html><body><nav id="TOC"></nav><h2>A b</h2><h3>C</h3><h2 id="x">D</h2></body></html>'
    out = render_report.add_toc(page)
    assert 'href="#a-b"' in out and 'href="#c"' in out and 'href="#x"' in out


# -- reporting -------------------------------------------------------------------------------------


def test_number_formats():
    assert reporting.num(348948.7) == "348\u2009948.7"
    assert reporting.num(-0.2102) == "\u22120.21"
    assert reporting.num(float("nan")) == "–"
    assert reporting.pct(-0.2102) == "\u221221.0 %"
    assert reporting.ir_str(0.2421) == "+0.242"
    assert reporting.p_str(1e-9) == "p < 0.001"
    assert reporting.eta_band(0.2) == "large" and reporting.eta_band(0.07) == "medium"
    assert reporting.sci(38681732480.0) == "3.868 × 10¹⁰"


def test_sections_only_for_microservices_present(rep):
    assert rep.targets() == ["L", "S", "B"]
    assert rep.resources_present() == ["cpu", "memory", "disk"]
    headings = [b.content for b in rep.results_blocks() if b.kind == "md" and b.content.startswith("###")]
    assert headings[:1] == ["### CPU"] and "### Disk I/O" in headings
    assert not any("Network" in h for h in headings)


def test_result_table_has_the_papers_layout(rep):
    html = rep.result_table("L", "gflops", "fixturehost", "docker").content
    for col in ["Mean", "Median", "Tr. Mean", "Max", "Min", "SD", "CV"]:
        assert f">{col}<" in html
    assert ">L(+S)<" in html and ">Case 3b<" in html


def test_published_ir_prefers_tables_then_means_then_text(rep):
    pub = rep.published_ir()
    l_l = pub[
        (pub["paper"] == "000") & (pub["case"] == "2") & (pub["target"] == "L") & (pub["partner"] == "L")
    ]
    assert len(l_l) == 1 and l_l.iloc[0]["source"] == "Table III" and l_l.iloc[0]["ir"] == -0.2102
    # 002 prints no IR: it is computed from Table 3's means against its Case 1 row.
    derived = pub[(pub["paper"] == "002") & (pub["case"] == "2") & (pub["partner"] == "S")].iloc[0]
    assert derived["ir_from"] == "the paper's means"
    assert derived["ir"] == pytest.approx((23.81 - 19.17) / 19.17)
    # Table IV's means win over the text's statement of the same combination.
    s_l = pub[(pub["paper"] == "002") & (pub["target"] == "S")]
    assert s_l.iloc[0]["ir_from"] == "text"  # 002 has no STREAM table: the text is all there is
    copy000 = pub[
        (pub["paper"] == "000") & (pub["target"] == "S") & (pub["metric"] == "copy") & (pub["case"] == "2")
    ]
    assert set(copy000["ir_from"]) == {"the paper's means"}


def test_comparison_verdicts(rep):
    c = rep.comparison()
    assert len(c) and set(c["paper"]) == {"000", "002"}
    row = c[(c["paper"] == "000") & (c["case"] == "2") & (c["partner"] == "S") & (c["target"] == "L")].iloc[0]
    # The paper has a gain (+0.242); the fixture machine a loss.
    assert row["verdict"] == "opposite sign" and not row["direction_agrees"]
    assert rep.direction(0.01) == 0 and rep.direction(-0.3) == -1
    summary = rep.comparison_summary(c)
    assert f"of the papers' {len(c)} interference ratios" in summary
    assert "Not reproduced" in summary


def test_lower_is_better_published_means_give_the_papers_sign(tmp_path, stats):
    pub = tmp_path / "pub"
    pub.mkdir()
    cols = "paper source host case target partner metric unit higher_is_better mean median trimmed_mean max min sd cv"
    rows = [
        "P\tT\th\t1\tL\t\tgflops\ts\tFalse\t10\t\t\t\t\t\t",
        "P\tT\th\t2\tL\tS\tgflops\ts\tFalse\t12\t\t\t\t\t\t",
    ]
    (pub / "means.tsv").write_text(cols.replace(" ", "\t") + "\n" + "\n".join(rows) + "\n")
    r = reporting.Report(stats, pub)
    ir = r.published_ir()
    assert ir.iloc[0]["ir"] == pytest.approx(-0.2)  # slower (lower is better) is a loss


def test_anova_sentence_names_the_factor_and_its_effect_size(rep):
    fam = rep.anova[(rep.anova["target"] == "L") & (rep.anova["metric"] == "gflops")]
    s = rep.anova_sentence(fam)
    top = (
        fam[fam["method"] == "anova2"]
        .dropna(subset=["partial_eta_sq"])
        .sort_values("partial_eta_sq")
        .iloc[-1]
    )
    assert "matters most" in s and reporting.num(top["partial_eta_sq"], 3) in s


def test_no_published_tables(stats):
    r = reporting.Report(stats, None)
    assert "not available" in r.comparison_blocks()[0].content
    assert any("No published values" in b.content for b in r.abstract())


def test_every_section_renders_without_published_and_with_one_group(tmp_path, stats):
    # A stats set reduced to Case 1 alone: no IR, no ANOVA families, no published values.
    small = tmp_path / "small"
    small.mkdir()
    for name in ["summary", "interference", "anova", "posthoc"]:
        df = pd.read_csv(stats / f"{name}.tsv", sep="\t", dtype=str, keep_default_na=False)
        if "case" in df:
            df = df[df["case"] == "1"]
        else:
            df = df.iloc[:0]
        df.to_csv(small / f"{name}.tsv", sep="\t", index=False)
    for name in ["runs.tsv", "environment.json"]:
        (small / name).write_text((stats / name).read_text())
    r = reporting.Report(small, None)
    for part in [
        r.abstract,
        r.ceem,
        r.cases_blocks,
        r.environment_blocks,
        r.runs_blocks,
        r.results_blocks,
        r.heatmap_blocks,
        r.anova_blocks,
        r.posthoc_blocks,
        r.comparison_blocks,
        r.quality_blocks,
        r.colophon,
    ]:
        assert isinstance(part(), list)
    assert np.isfinite(r.summary["mean"]).all()


def test_two_runtimes_are_reported_side_by_side(tmp_path, stats):
    both = tmp_path / "both"
    both.mkdir()
    for name in ["summary", "interference", "anova", "posthoc", "runs"]:
        df = pd.read_csv(stats / f"{name}.tsv", sep="\t", dtype=str, keep_default_na=False)
        other = df.assign(runtime="podman")
        pd.concat([df, other]).to_csv(both / f"{name}.tsv", sep="\t", index=False)
    (both / "environment.json").write_text((stats / "environment.json").read_text())
    r = reporting.Report(both, PUBLISHED)
    assert r.many_setups()
    results = r.results_blocks()
    assert any(b.kind == "md" and b.content == "##### podman on fixturehost" for b in results)
    assert len(r.heatmap_blocks()) == 2
    for part in [r.anova_blocks, r.posthoc_blocks, r.comparison_blocks, r.quality_blocks, r.runs_blocks]:
        assert part()
