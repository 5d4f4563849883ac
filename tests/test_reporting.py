"""Unit tests of the report's parts: the run collector (run_info), the renderer's reading and
assembly of the .qmd (render_report), the generic report package (interference.rendering.kit), the
published comparison (studies/pairs/published.py) and the pair study's section."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, report_stats_copy
from interference.rendering import fallback as render_fallback
from interference.rendering import render as render_report
from interference.rendering.document import Document
from interference.rendering.kit import environment
from interference.rendering.kit import format as fmt
from interference.rendering.kit.tables import table_html
from interference.steps import environment as run_info
from interference.studies.pairs import PUBLISHED_FILES, runs, schemas
from interference.studies.pairs.section import PairsSection
from interference.studies.pairs.section.data import eta_band
from interference.studies.pairs.statistics import published

PUBLISHED = REPO / "tests" / "fixtures" / "published"


@pytest.fixture(scope="module")
def stats(report_fixture_made, tmp_path_factory):
    return report_stats_copy(report_fixture_made, tmp_path_factory)


def section(stats, published_dir=PUBLISHED) -> PairsSection:
    return PairsSection(Document(stats, published_dir, renderer="test", studies="pairs"))


@pytest.fixture(scope="module")
def rep(stats):
    return section(stats)


def copy_stats(stats, dest, keep=lambda name, df: df):
    """A copy of the stats set with each pairs table passed through keep(name, frame)."""
    (dest / "pairs").mkdir(parents=True)
    shutil.copy(stats / "environment.json", dest / "environment.json")
    shutil.copy(stats / "run_order.tsv", dest / "run_order.tsv")
    for p in (stats / "pairs").glob("*.tsv"):
        df = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
        keep(p.stem, df).to_csv(dest / "pairs" / p.name, sep="\t", index=False)
    return dest


# -- run_info ------------------------------------------------------------------------------------


def test_memory_notation():
    assert runs.memory_bytes("1g") == 1024**3
    assert runs.memory_bytes("512m") == 512 * 1024**2
    assert runs.memory_bytes("1073741824") == 1024**3
    assert runs.memory_bytes("max") is None
    assert runs.memory_bytes(None) is None


def test_limits_match():
    back = {"cpuset": "0", "memory_max": "1073741824", "cpu_quota_us": "-1", "cpu_period_us": "100000"}
    assert runs.limits_match({"cpuset": "0", "memory": "1g"}, back) == "yes"
    assert "cpuset 1 read 0" in runs.limits_match({"cpuset": "1", "memory": "1g"}, back)
    assert "memory 2g" in runs.limits_match({"cpuset": "0", "memory": "2g"}, back)
    quota = {"cpu_quota_us": "100000", "cpu_period_us": "100000"}
    assert runs.limits_match({"cpus": 1.0}, quota) == "yes"
    assert runs.limits_match({"cpus": 2.0}, quota).startswith("cpus 2.0")
    assert runs.limits_match({"cpuset": None, "cpus": None, "memory": None}, back) == "unlimited"


def test_runs_table_has_one_row_per_run_and_members_one_per_member_with_limits(stats):
    table = pd.read_csv(stats / "pairs" / "runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert set(table["study"]) == {"pairs"} and "case3b/L+S" in set(table["key"])
    table = table[table["runtime"] == "docker"]
    # 3 microservices alone + 6 pairs in each of 3 concurrent cases.
    assert len(table) == 3 + 3 * 6
    r = table[(table["case"] == "3b") & (table["pair"] == "L+S")].iloc[0]
    assert float(r["overlap_s"]) > 0 and r["window_s"] == "60"
    assert table["n_failed"].astype(int).sum() == 2
    members = pd.read_csv(stats / "pairs" / "run_members.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert list(members.columns) == schemas.RUN_MEMBERS.columns
    members = members[members["runtime"] == "docker"]
    assert len(members) == 3 + 3 * 6 * 2  # one row per member: the pairs' two each
    m = members[members["key"] == "case3b/L+S"].set_index("member")
    assert list(m["role"]) == ["member1", "member2"] and list(m["microservice"]) == ["L", "S"]
    assert list(m["requested_cpuset"]) == list(m["read_cpuset"]) == ["0", "1"]
    assert set(m["limits_match"]) == {"yes"} and set(m["run_id"]) == {r["run_id"]}
    case2 = members[members["key"] == "case2/L+S"]
    assert set(case2["container"]) == {"member1+member2"} and set(case2["limits_match"]) == {"unlimited"}
    assert members["failed"].astype(int).sum() == 2
    assert not table.columns.str.startswith("member").any()  # the members are rows, not columns


def test_environment_records_host_engine_config_hash_and_declarations(stats, tmp_path):
    env = json.loads((stats / "environment.json").read_text())
    assert env["hosts"]["fixturehost"]["cores"] == 2
    assert env["engines"]["docker"]["cgroup_version"] == "1"
    assert set(env["engines"]) == {"docker", "baremetal"}
    assert env["config"]["studies"]["pairs"]["microservices"] == ["L", "S", "B"]
    assert env["config_sha256"] == run_info.sha256_of(env["config"])
    assert env["microservices"]["L"]["resource"] == "CPU"
    assert env["microservices"]["B"]["stand_in_reason"]
    config = tmp_path / "c.yaml"
    config.write_text("studies: {pairs: {microservices: [L]}}\n")
    e = run_info.environment([], [], {"studies": {"pairs": {"microservices": ["L"]}}}, [config])
    assert e["config_files"][0]["sha256"] == run_info.file_sha256(config)
    assert e["microservices"]["L"]["in_config"] is True


def test_config_hash_changes_with_the_config():
    assert run_info.sha256_of({"a": 1, "b": [1, 2]}) == run_info.sha256_of({"b": [1, 2], "a": 1})
    assert run_info.sha256_of({"a": 1}) != run_info.sha256_of({"a": 2})


# -- render_report: reading the .qmd ---------------------------------------------------------------


def test_front_matter_and_cell_options():
    front, body = render_report.split_front_matter("---\ntitle: T\nexecute:\n  echo: false\n---\n\n# H\n")
    assert front == {"title": "T", "execute": {"echo": False}} and body.strip() == "# H"
    opts, code = render_fallback.cell_options("#| echo: false\n#| tags: [parameters]\nx = 1\n")
    assert opts == {"echo": False, "tags": ["parameters"]} and code == "x = 1"


def test_qmd_cells_get_removal_tags_and_injected_parameters():
    text = (REPO / "report" / "paper.qmd").read_text()
    front, nb = render_fallback.qmd_to_notebook(text, {"stats_dir": "/s", "renderer": "r"})
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
    out = render_fallback.add_toc(page)
    assert 'href="#a-b"' in out and 'href="#c"' in out and 'href="#x"' in out


def test_assembly_puts_each_studys_section_at_the_mark(tmp_path):
    text = (REPO / "report" / "paper.qmd").read_text()
    out = render_report.assemble(text, ["pairs", "nosuchstudy"], REPO / "report")
    assert render_report.SECTIONS_MARK not in out
    pairs_at = out.index("## Method")  # the pair study's own fragment (section.qmd)
    generic_at = out.index('doc.generic_section("nosuchstudy")')  # no fragment: the generic one
    assert out.index("emit(doc.abstract())") < pairs_at < generic_at < out.index("## Colophon")
    qmd = render_report.write_assembled(REPO / "report" / "paper.qmd", ["pairs"], tmp_path)
    assert (tmp_path / "paper.css").exists() and "## Data quality" in qmd.read_text()


def test_default_studies_are_those_with_results(tmp_path):
    (tmp_path / "pairs").mkdir()
    assert render_report.default_studies(tmp_path) == ["pairs"]


# -- the generic report package ----------------------------------------------------------------------


def test_number_formats():
    assert fmt.num(348948.7) == "348\u2009948.7"
    assert fmt.num(-0.2102) == "\u22120.21"
    assert fmt.num(float("nan")) == "–"
    assert fmt.pct(-0.2102) == "\u221221.0 %"
    assert fmt.signed(0.2421) == "+0.242"
    assert fmt.p_str(1e-9) == "p < 0.001"
    assert eta_band(0.2) == "large" and eta_band(0.07) == "medium"
    assert fmt.sci(38681732480.0) == "3.868 × 10¹⁰"


def test_table_groups_its_first_column_and_escapes_text():
    html = table_html(
        ["Case", "Pair", "Mean"],
        [["Case 1", "L", "1"], ["Case 2", "L(+S)", "<2>"], ["Case 2", "L(+L)", ("html", "<b>3</b>")]],
        "A caption",
        number=7,
        group_first=True,
        numeric_from=2,
        cell_class=lambda i, j: "flag-cell" if (i, j) == (1, 2) else "",
    )
    assert "<b>Table 7.</b> A caption" in html and 'rowspan="2"' in html
    assert "&lt;2&gt;" in html and "<b>3</b>" in html
    assert "flag-cell" in html and "group-start" in html
    assert 'data-quarto-disable-processing="true"' in html


def test_generic_section_shows_a_studys_tables(tmp_path, stats):
    shutil.copy(stats / "environment.json", tmp_path / "environment.json")
    (tmp_path / "other").mkdir()
    pd.DataFrame({"target": ["L", "S"], "mean": [1.5, 2500.25]}).to_csv(
        tmp_path / "other" / "summary.tsv", sep="\t", index=False
    )
    # A study without members writes run_members.tsv with its header only: not shown.
    (tmp_path / "other" / "run_members.tsv").write_text("host\truntime\tmember\n")
    doc = Document(tmp_path, None, "test", "other")
    blocks = doc.generic_section("other")
    assert blocks[0].content == "## other"
    tables = [b.content for b in blocks if b.kind == "html"]
    assert len(tables) == 1 and "2\u2009500.2" in tables[0] and "summary.tsv" in tables[0]
    (tmp_path / "other" / "run_members.tsv").write_text("host\truntime\tmember\nh\tdocker\t1\n")
    shown = [
        b.content
        for b in Document(tmp_path, None, "test", "other").generic_section("other")
        if b.kind == "html"
    ]
    assert len(shown) == 2 and "run_members.tsv" in shown[1]
    abstract = [b.content for b in doc.abstract()]
    # No scorecard: the environment once, then each study's sentence.
    assert abstract[0].startswith("Every run here was on ") and abstract[1] == "other: 0 runs."


# -- the published comparison (results/stats/pairs/published.tsv) --------------------------------------


def test_published_tsv_sets_the_papers_ir_beside_ours(stats):
    # One row of published.tsv recomputed by hand from its two sources: the fixture's published
    # table (000 Table III prints +0.2421 for Case 2 L+S) and our interference.tsv.
    written = published.read(stats / "pairs" / "published.tsv")
    assert list(written.columns) == published.COLUMNS and set(written["comparison"]) == {"ir", "mean"}
    ours = pd.read_csv(stats / "pairs" / "interference.tsv", sep="\t", dtype={"case": str})
    cell = {"runtime": "docker", "case": "2", "target": "L", "partner": "S", "metric": "gflops"}

    def one(df, **kw):
        sel = df[(df[list(kw)] == pd.Series(kw)).all(axis=1)]
        assert len(sel) == 1, kw
        return sel.iloc[0]

    o = one(ours, **cell)
    w = one(written, comparison="ir", paper="000", **cell)
    assert w["paper_ir"] == 0.2421 and w["ir"] == pytest.approx(o["ir"])
    assert w["ratio"] == pytest.approx(abs(o["ir"]) / 0.2421)
    assert w["in_ci"] == (o["ir_ci_low"] <= 0.2421 <= o["ir_ci_high"])
    assert w["direction_agrees"] == (o["ir"] >= published.NEGLIGIBLE_IR)  # the paper's is a gain


def test_published_table_is_registered_with_its_inputs():
    from interference import studies

    table = studies.get("pairs").tables["published"]
    assert table.needs == ("summary", "interference")
    assert set(table.files) == set(PUBLISHED_FILES)


def test_published_ir_prefers_tables_then_means_then_text():
    pub = published.published_ir(
        published.read_published(PUBLISHED, "interference_ratios"),
        published.read_published(PUBLISHED, "means"),
    )
    l_l = pub[
        (pub["paper"] == "000") & (pub["case"] == "2") & (pub["target"] == "L") & (pub["partner"] == "L")
    ]
    assert len(l_l) == 1 and l_l.iloc[0]["source"] == "Table III" and l_l.iloc[0]["ir"] == -0.2102
    # 002 prints no IR: it is computed from Table 3's means against its Case 1 row.
    derived = pub[(pub["paper"] == "002") & (pub["case"] == "2") & (pub["partner"] == "S")].iloc[0]
    assert derived["ir_from"] == "the paper's means"
    assert derived["ir"] == pytest.approx((23.81 - 19.17) / 19.17)
    s_l = pub[(pub["paper"] == "002") & (pub["target"] == "S")]
    assert s_l.iloc[0]["ir_from"] == "text"  # 002 has no STREAM table: the text is all there is
    copy000 = pub[
        (pub["paper"] == "000") & (pub["target"] == "S") & (pub["metric"] == "copy") & (pub["case"] == "2")
    ]
    assert set(copy000["ir_from"]) == {"the paper's means"}


def test_lower_is_better_published_means_give_the_papers_sign(tmp_path):
    cols = "paper source host case target partner metric unit higher_is_better mean median trimmed_mean max min sd cv"
    rows = [
        "P\tT\th\t1\tL\t\tgflops\ts\tFalse\t10\t\t\t\t\t\t",
        "P\tT\th\t2\tL\tS\tgflops\ts\tFalse\t12\t\t\t\t\t\t",
    ]
    (tmp_path / "means.tsv").write_text(cols.replace(" ", "\t") + "\n" + "\n".join(rows) + "\n")
    ir = published.published_ir(pd.DataFrame(), published.read_published(tmp_path, "means"))
    assert ir.iloc[0]["ir"] == pytest.approx(-0.2)  # slower (lower is better) is a loss


def test_means_are_converted_to_our_unit(rep):
    m = rep.comparison.published_means()
    stream = m[(m["paper"] == "000") & (m["metric"] == "copy") & (m["case"] == "1")].iloc[0]
    assert stream["paper_unit"] == "GB/s" and stream["paper_mean"] == pytest.approx(
        stream["paper_mean_printed"] * 1000
    )


# -- the pair study's section ------------------------------------------------------------------------


def test_sections_only_for_microservices_present(rep):
    assert rep.data.targets() == ["L", "S", "B"]
    assert rep.data.resources_present() == ["cpu", "memory", "disk"]
    headings = [
        b.content for b in rep.results.results_blocks() if b.kind == "md" and b.content.startswith("###")
    ]
    assert headings[:1] == ["### CPU"] and "### Disk I/O" in headings
    assert not any("Network" in h for h in headings)


def test_result_table_has_the_papers_layout(rep):
    html = rep.results.result_table("L", "gflops", "fixturehost", "docker").content
    for col in ["Mean", "Median", "Tr. Mean", "Max", "Min", "SD", "CV"]:
        assert f">{col}<" in html
    assert ">L(+S)<" in html and ">Case 3b<" in html


def test_comparison_verdicts(rep):
    c = rep.comparison.published_irs()
    assert len(c) and set(c["paper"]) == {"000", "002"}
    row = c[
        (c["paper"] == "000")
        & (c["case"] == "2")
        & (c["partner"] == "S")
        & (c["target"] == "L")
        & (c["runtime"] == "docker")
    ].iloc[0]
    # The paper has a gain (+0.242); the fixture machine a loss.
    assert row["verdict"] == "opposite sign" and not row["direction_agrees"]
    assert published.direction(0.01) == 0 and published.direction(-0.3) == -1
    summary = rep.comparison.comparison_summary(c)
    assert f"of {len(c)} interference ratios have the paper's direction" in summary
    # The headline is the fidelity table's, the abstract's and the Findings section's number.
    fid = rep.data.fidelity
    assert f"of the papers' {int(fid['pairings'].sum())} pairings" in summary
    assert "Not reproduced" in summary


def test_anova_sentence_names_the_factor_and_its_effect_size(rep):
    fam = rep.data.anova[
        (rep.data.anova["target"] == "L")
        & (rep.data.anova["metric"] == "gflops")
        & (rep.data.anova["runtime"] == "docker")
    ]
    s = rep.significance.anova_sentence(fam)
    top = (
        fam[fam["method"] == "anova2"]
        .dropna(subset=["partial_eta_sq"])
        .sort_values("partial_eta_sq")
        .iloc[-1]
    )
    assert "matters most" in s and fmt.num(top["partial_eta_sq"], 3) in s


def test_the_variance_table_shows_each_sides_cv_between_runs_from_the_table(stats, tmp_path):
    """The Method's variance table reads each side's components (variance_components.tsv's
    baseline_* and concurrent_* columns, what the IR intervals use) and changes with them."""

    def sides(baseline_run_var, concurrent_df):
        def keep(name, df):
            if name == "variance_components":
                df = df.assign(baseline_run_var=str(baseline_run_var), baseline_df_run="4",
                               concurrent_run_var="0.01", concurrent_df_run=str(concurrent_df))  # fmt: skip
            return df

        r = section(copy_stats(stats, tmp_path / f"v{baseline_run_var}-{concurrent_df}", keep))
        return "".join(b.content for b in r.method.variance_blocks())

    html = sides(0.0025, 3)
    assert ">CV between runs, Case 1<" in html and ">CV between runs, concurrent<" in html
    assert ">5.0 %<" in html and ">10.0 %<" in html  # sqrt(0.0025), sqrt(0.01)
    other = sides(0.0009, 0)
    assert ">3.0 %<" in other and ">5.0 %<" not in other and ">10.0 %<" not in other  # df 0: "–"


def test_no_published_tables(stats, tmp_path):
    bare = copy_stats(
        stats, tmp_path / "bare", lambda name, df: df.iloc[:0] if name in ("published", "fidelity") else df
    )
    r = section(bare, None)
    assert "not available" in r.comparison.comparison_blocks()[0].content
    assert any(
        "No published interference ratio is of a pairing measured here" in b.content for b in r.abstract()
    )


def test_every_section_renders_with_one_group_and_one_runtime(tmp_path, stats):
    # Case 1 on docker alone: no IR, no ANOVA families, no published values, one runtime.
    def keep(name, df):
        if name in ("anova", "posthoc", "published", "fidelity"):
            return df.iloc[:0]
        df = df[df["runtime"] == "docker"]
        return df[df["case"] == "1"] if "case" in df else df

    r = section(copy_stats(stats, tmp_path / "small", keep), None)
    for part in [
        r.abstract,
        r.method.ceem,
        r.method.cases_blocks,
        r.method.runs_blocks,
        r.results.results_blocks,
        r.results.heatmap_blocks,
        r.runtimes.runtimes_blocks,
        r.significance.anova_blocks,
        r.significance.posthoc_blocks,
        r.comparison.comparison_blocks,
        r.quality.quality_blocks,
        r.data.doc.environment_blocks,
        r.data.doc.colophon,
    ]:
        assert isinstance(part(), list)  # each renders
    assert np.isfinite(r.data.summary["mean"]).all()
    # What has no data says so in a sentence of its own.
    said = {
        r.runtimes.runtimes_blocks: "This run used one runtime (docker), so there is no comparison between runtimes.",
        r.results.heatmap_blocks: "No interference ratios were computed (no concurrent case in the data).",
        r.significance.anova_blocks: "No ANOVA results.",
        r.significance.posthoc_blocks: "No post hoc results.",
    }
    for part, sentence in said.items():
        assert [b.content for b in part()] == [sentence]
    assert "are not available" in r.comparison.comparison_blocks()[0].content


def test_two_runtimes_are_reported_side_by_side(rep):
    assert rep.data.many_setups() and rep.runtimes.runtime_names() == ["docker", "baremetal"]
    results = rep.results.results_blocks()
    assert any(b.kind == "md" and b.content == "##### baremetal on fixturehost" for b in results)
    assert len(rep.results.heatmap_blocks()) == 2
    blocks = rep.runtimes.runtimes_blocks()
    table = next(b.content for b in blocks if "<table" in b.content)
    assert "Mean on docker" in table and "docker / baremetal" in table
    assert sum("<figure" in b.content for b in blocks) == 1
    for part in [
        rep.significance.anova_blocks,
        rep.significance.posthoc_blocks,
        rep.comparison.comparison_blocks,
        rep.quality.quality_blocks,
        rep.method.runs_blocks,
    ]:
        text = "".join(b.content for b in part())
        assert "(docker on fixturehost)" in text and "(baremetal on fixturehost)" in text, part.__name__


def test_contention_section_shows_pressure_per_case_and_its_relation_to_performance(rep, stats, tmp_path):
    blocks = rep.contention.contention_blocks()
    table = next(b.content for b in blocks if "<table" in b.content)
    assert "CPU some" in table and "Case 3a" in table and "OOM kills" in table
    assert sum("<figure" in b.content for b in blocks) == 1
    # The fixture's concurrent iterations are slower under more pressure: a rank correlation each.
    sentence = next(b.content for b in blocks if "Spearman" in b.content)
    assert all(f"{t} ρ = " in sentence for t in ("L", "S", "B"))
    # Runs without telemetry: the section says so instead of drawing empty plots.
    bare = copy_stats(
        stats, tmp_path / "s", keep=lambda name, df: df.iloc[0:0] if name == "contention" else df
    )
    only = section(bare).contention.contention_blocks()
    assert len(only) == 1 and "no contention telemetry" in only[0].content


def test_contention_per_case_is_read_from_its_table_and_the_interval_from_the_runs(rep, stats, tmp_path):
    blocks = rep.contention.contention_blocks()
    assert "every 0.5 s" in blocks[0].content  # the runs' sampler interval (runs.tsv)

    def changed(name, df):
        if name == "contention_by_case":
            df = df.copy()
            df.loc[df["case"] == "3a", "oom_kill"] = "4321"
            df.loc[df["case"] == "3a", "psi_cpu_some"] = "0.987"
        if name == "runs":
            df = df.assign(telemetry_interval_s="2")
        return df

    other = section(copy_stats(stats, tmp_path / "o", keep=changed))
    blocks = other.contention.contention_blocks()
    table = next(b.content for b in blocks if "<table" in b.content)
    assert fmt.num(4321, 0) in table  # the table's sum, not one computed from contention.tsv
    assert "98.7 %" in table and "every 2 s" in blocks[0].content


def test_quality_part_shows_the_drift_and_the_run_order(rep, stats, tmp_path):
    blocks = rep.quality.drift_blocks()
    text = blocks[0].content
    assert text.startswith("**Drift.**") and "at most 3.0 % in size" in text
    table = blocks[1].content
    assert "Minutes apart" in table and "−3.0 %" in table and "60.0" in table
    order = environment.order_block(rep.data.doc)
    assert len(order) == 1 and "random order drawn with seed 1" in order[0].content
    assert "fixturehost: " in order[0].content and "Kendall's τ" in order[0].content
    bare = copy_stats(stats, tmp_path / "s", keep=lambda name, df: df.iloc[0:0] if name == "drift" else df)
    assert "Not measured" in section(bare).quality.drift_blocks()[0].content


def test_design_sentence_states_what_ran_not_the_config(rep, stats, tmp_path):
    """CEEM step 7 and the factors are read from runs.tsv: changing the runs changes them, the
    config (environment.json) does not."""
    text = rep.method.design_text()
    assert "12 iterations in Case 1 (a fresh container each)" in text
    assert "in all 6 unordered pairs (self-pairs included) in Cases 2, 3a and 3b" in text
    assert "windows of 60 s in Case 2, 60 s in Case 3a and 60 s in Case 3b" in text
    assert "an iteration over 300 s is killed" in text

    def changed(name, df):
        if name != "runs":
            return df
        df = df[df["pair"] != "L+B"].copy()  # one pair did not run
        first = df.index[df["case"] == "1"][0]
        df.loc[first, "n_iterations"] = "15"  # a run that went on (adaptive)
        df.loc[df["case"] == "3a", "window_final_s"] = "90"  # held open past its 60 s
        df["iteration_timeout_s"] = "120"
        return df

    other = copy_stats(stats, tmp_path / "o", keep=changed)
    env = json.loads((other / "environment.json").read_text())
    env["config"]["studies"]["pairs"].update(iterations=99, iteration_timeout_s=7)  # not what ran
    (other / "environment.json").write_text(json.dumps(env))
    text = section(other).method.design_text()
    assert "12–15 iterations in Case 1" in text and "99" not in text
    assert "in the 5 pairs L+L, L+S, S+S, S+B and B+B in Cases 2, 3a and 3b" in text
    assert "60 s in Case 3a, held open to at most 90 s" in text
    assert "an iteration over 120 s is killed" in text and " 7 s" not in text
    # Only Case 1 ran: no pairs, no windows.
    alone = copy_stats(stats, tmp_path / "a", keep=lambda n, df: df[df["case"] == "1"] if n == "runs" else df)
    text = section(alone).method.design_text()
    assert text.startswith("Case 1; 3 microservices (L, S, B) alone in Case 1; 12 iterations in Case 1")
    assert "windows" not in text and "pairs" not in text
    # Sizes as the runs recorded them, whatever the config says.
    assert section(other).method.sizes_text() == rep.method.sizes_text()
    assert "n = 5" in rep.method.sizes_text()


def test_where_the_network_servers_ran_is_read_from_the_runs(rep, stats, tmp_path):
    """run_members.tsv's server_cpuset: no sentence without a server, the cases as recorded."""
    assert "server" not in rep.method.design_text()

    def served(name, df):
        if name != "run_members":
            return df
        df = df.copy()
        case = df["key"].str.split("/").str[0].str.removeprefix("case")
        b = df["microservice"] == "B"
        df["server_cpuset"] = ""
        df.loc[b & (case == "1"), "server_cpuset"] = "0"
        df.loc[b & (case == "3b"), "server_cpuset"] = df.loc[b & (case == "3b"), "read_cpuset"]
        df.loc[b & case.isin(["2", "3a"]), "server_cpuset"] = "any"
        return df

    text = section(copy_stats(stats, tmp_path / "s", keep=served)).method.design_text()
    assert (
        "each network microservice's server (B) ran on its member's cores in Cases 1 and 3b and on any core in Cases 2 and 3a"
        in text
    )

    def mixed(name, df):  # one Case 1 run of another rule (another host's, an older version's)
        df = served(name, df)
        if name == "run_members":
            df.loc[
                df.index[(df["microservice"] == "B") & (df["server_cpuset"] == "0")][:1], "server_cpuset"
            ] = "any"
        return df

    text = section(copy_stats(stats, tmp_path / "m", keep=mixed)).method.design_text()
    assert (
        "ran on its member's cores in Case 3b and on any core in Cases 2 and 3a and on its member's cores"
        " in some runs and on any core in others in Case 1" in text
    )


def test_run_order_sentence_reads_the_table_not_the_config(stats, tmp_path):
    """The report states run_order.tsv (the run-facts step's), whatever the config says."""
    other = copy_stats(stats, tmp_path / "o")
    env = json.loads((other / "environment.json").read_text())
    env["config"]["run_order"] = {"shuffle": True, "seed": 99}  # not what the table says
    (other / "environment.json").write_text(json.dumps(env))
    table = pd.read_csv(other / "run_order.tsv", sep="\t")
    table.assign(kendall_tau=0.25, seed=7, n_runs=3, span_s=600.0).to_csv(
        other / "run_order.tsv", sep="\t", index=False
    )
    text = environment.order_block(Document(other, studies="pairs"))[0].content
    assert "seed 7" in text and "seed 99" not in text
    assert "fixturehost: 3 runs over 10 min, Kendall's τ = 0.25" in text
    table.assign(shuffle=False).to_csv(other / "run_order.tsv", sep="\t", index=False)
    assert "sorted order" in environment.order_block(Document(other, studies="pairs"))[0].content
    (other / "run_order.tsv").unlink()  # the step did not run: no sentence rather than a computed one
    assert environment.order_block(Document(other, studies="pairs")) == []


def test_bonnie_page_cache_evidence_per_case(rep, stats, tmp_path):
    blocks = rep.page_cache.page_cache_blocks()
    assert blocks[0].content.startswith("**Bonnie++ and the page cache.**")
    table = blocks[1].content
    for case in ("Case 1", "Case 2", "Case 3a", "Case 3b"):
        assert case in table
    assert "unlimited (the host" in table and "2.0 GiB" in table and "baseline" in table
    assert "data set (4096 MiB)" in blocks[0].content  # B's size as its runs recorded it

    # Direct I/O as the runs recorded it: one sentence, no table; the config says otherwise.
    def direct_runs(name, df):
        if name != "run_members":
            return df
        df = df.copy()
        df.loc[df["microservice"] == "B", "sizes"] = "direct_io=True, file_size_mb=4096"
        return df

    direct = copy_stats(stats, tmp_path / "d", keep=direct_runs)
    env = json.loads((direct / "environment.json").read_text())
    assert env["config"]["studies"]["pairs"]["sizes"]["B"]["direct_io"] is False
    only = section(direct).page_cache.page_cache_blocks()
    assert len(only) == 1 and "O_DIRECT" in only[0].content
    # The config alone turning it on changes nothing: the runs were buffered.
    env["config"]["studies"]["pairs"]["sizes"]["B"]["direct_io"] = True
    buffered = copy_stats(stats, tmp_path / "b")
    (buffered / "environment.json").write_text(json.dumps(env))
    assert len(section(buffered).page_cache.page_cache_blocks()) == 2


def test_bonnie_rewrite_cause_follows_the_irs(rep):
    from interference.studies.pairs.section.page_cache import rewrite_cause

    limit = rewrite_cause({"1": [], "2": [0.5, 0.8], "3a": [0.4], "3b": [-0.05, 0.03]})
    assert "is the memory limit's absence, not the partner" in limit and "0.40 to 0.80" in limit
    partner = rewrite_cause({"2": [0.5, 0.8], "3a": [0.4], "3b": [0.3, 0.6]})
    assert "not the limit's absence alone" in partner and "0.30 to 0.60" in partner
    untold = rewrite_cause({"2": [0.5], "3a": [0.4]})
    assert "cannot be told" in untold and "absence, not the partner" not in untold
    none = rewrite_cause({"2": [0.02, 0.5], "3a": [0.01], "3b": [0.0]})
    assert "no gain to explain" in none and "absence" not in none
    assert "not in these results" in rewrite_cause({"1": [], "3b": [0.0]})
    # The section's text is one of these, from the fixture's own IRs.
    text = rep.page_cache.page_cache_blocks()[0].content
    ir = rep.data.ir[(rep.data.ir["target"] == "B") & (rep.data.ir["metric"] == "block_rewrite")]
    irs = {c: list(g["ir"].dropna()) for c, g in ir.groupby("case")}
    assert rewrite_cause(irs) in text
    if not any(irs.get(c) for c in ("2", "3a")):  # the fixture's Bonnie++ has no rewrite IR
        assert "not in these results" in text and "the partner" not in text


def test_bonnie_untimed_share_is_counted_with_and_without_a_limit():
    from interference.studies.pairs.section.page_cache import untimed_contrast

    text = untimed_contrast({"1": (0, 10), "2": (8, 10), "3a": (6, 10), "3b": (1, 10)})
    assert "70 % of its block-input and seek samples without a memory limit" in text
    assert "5 % with one" in text
    assert "35 %" in untimed_contrast({"1": (0, 10), "2": (4, 10), "3a": (3, 10), "3b": (1, 10)})
    assert untimed_contrast({"1": (0, 10)}) == ""  # no unlimited case ran: nothing to contrast
