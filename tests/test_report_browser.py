"""The rendered report in a real browser: report/paper.qmd with the pair study's section
rendered (nbconvert fallback, as where Quarto is absent) from a generated fixture stats set (two
runtimes: docker and bare metal), opened in headless Chromium over the DevTools protocol. It must
load without console errors or network requests, have the expected sections, figures and tables,
and leave screenshots in tests/artifacts/."""

import os
import subprocess
import sys

import pytest
from chromium_cdp import Chromium, find_chromium
from conftest import REPO
from report_fixture import make_fixture

ARTIFACTS = REPO / "tests" / "artifacts"
PUBLISHED = REPO / "tests" / "fixtures" / "published"
SECTIONS = [
    "Method",
    "CEEM steps",
    "Placement cases and limits",
    "Host, engine, images and config",
    "Runs",
    "Results",
    "CPU",
    "Memory",
    "Disk I/O",
    "Interference heat map",
    "Runtimes",
    "Contention",
    "Statistical tests",
    "Analysis of variance",
    "Post hoc comparisons",
    "Comparison with the published results",
    "Data quality",
    "Colophon",
]

requires_chromium = pytest.mark.skipif(
    find_chromium() is None, reason="no chromium (make test installs it: scripts/ensure-engine.sh --browser)"
)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    stats = make_fixture(tmp / "stats")
    out = tmp / "paper.html"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "interference.render_report",
            str(REPO / "report" / "paper.qmd"),
            "--out",
            str(out),
            "--stats-dir",
            str(stats),
            "--studies",
            "pairs",
            "--published-dir",
            str(PUBLISHED),
            "--renderer",
            "nbconvert",
        ],
        check=False,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def test_render_is_self_contained_and_says_its_renderer(rendered):
    from interference.render_report import external_resources

    html = rendered.read_text()
    assert external_resources(html) == []
    from bs4 import BeautifulSoup

    generator = BeautifulSoup(html, "html.parser").find("meta", attrs={"name": "generator"})
    assert generator is not None and generator["content"].startswith("nbconvert")
    assert "Rendered by" in html and "the Quarto CLI not being installed" in html


@requires_chromium
def test_report_opens_cleanly_in_chromium(rendered):
    out = rendered
    ARTIFACTS.mkdir(exist_ok=True)
    with Chromium() as browser:
        browser.open(out.as_uri())
        assert browser.problems() == []
        page = browser.evaluate(
            """({
            title: document.title,
            headings: [...document.querySelectorAll('main h2, main h3')]
                .filter(h => !h.closest('nav')).map(h => h.textContent.trim()),
            toc: document.querySelectorAll('nav#TOC a').length,
            figures: document.querySelectorAll('figure.rpt-figure').length,
            decoded: [...document.querySelectorAll('figure.rpt-figure img')]
                .filter(i => i.complete && i.naturalWidth > 300).length,
            captions: [...document.querySelectorAll('figure.rpt-figure figcaption')].map(c => c.textContent),
            tables: document.querySelectorAll('table.rpt-table').length,
            flagged: document.querySelectorAll('td.flag-cell').length,
            text: document.body.innerText,
            width: document.documentElement.scrollWidth,
        })"""
        )
        browser.screenshot(ARTIFACTS / "report_top.png")
        browser.screenshot(ARTIFACTS / "report_full.png", full_page=True)
    assert page["title"].startswith("Microservices in containers, re-run")
    for section in SECTIONS:
        assert section in page["headings"], f"section {section!r} missing"
    assert "Network" not in page["headings"]  # no network microservice in the fixture's data
    assert page["toc"] >= len(SECTIONS)
    # Per runtime: means and IR per microservice (L, S, B) and the heat map; then the runtime
    # comparison, the published-vs-ours scatter and performance against CPU pressure.
    assert page["figures"] == 2 * (3 + 3 + 1) + 3 and page["decoded"] == page["figures"]
    assert all(c.startswith("Figure ") for c in page["captions"])
    assert page["tables"] >= 20
    assert page["flagged"] >= 1  # the fixture's high-CV group
    text = page["text"]
    for phrase in [
        "Linpack gflops result (GFLOPS, higher is better)",
        "Tr. Mean",
        "partial η²",
        "Tukey HSD",
        "This machine reproduces the direction of",
        "outside the overlap window",
        "coefficient of variation above 10 %",
        "stand-in for the papers' tool",
        "read back exactly the cgroup limits requested",
        "Case 1 baselines per runtime",
        "docker / host",
    ]:
        assert phrase in text, phrase
    assert page["width"] <= 1280, "the page scrolls sideways"
    assert (ARTIFACTS / "report_full.png").stat().st_size > 50_000
