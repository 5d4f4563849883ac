"""The rendered report in a real browser: report/paper.qmd with the pair study's section
rendered (nbconvert fallback, as where Quarto is absent) from a generated fixture stats set (two
runtimes: docker and bare metal), opened in headless Chromium driven by Selenium (Debian's
chromium with its chromium-driver: no browser download). It must load without console errors or
network requests, have the expected sections, figures and tables, and leave screenshots in
tests/artifacts/."""

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, report_stats_copy
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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

BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
DRIVER = shutil.which("chromedriver")
requires_chromium = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="no chromium and chromedriver (make test installs them: scripts/ensure-engine.sh --browser)",
)
WIDTH, HEIGHT = 1280, 900


@contextlib.contextmanager
def chromium():
    """Headless Chromium under Selenium, logging the console and the network (to find errors and
    requests leaving the machine)."""
    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={WIDTH},{HEIGHT}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def problems(driver) -> list[str]:
    """Console errors and uncaught exceptions, failed loads, and requests leaving the machine."""
    out = [f"console: {e['message']}" for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    for entry in driver.get_log("performance"):
        event = json.loads(entry["message"])["message"]
        if event["method"] == "Network.loadingFailed":
            out.append(f"load failed: {event['params'].get('errorText')}")
        elif event["method"] == "Network.requestWillBeSent":
            url = event["params"]["request"]["url"]
            if not url.startswith(("file:", "data:", "about:", "blob:")):
                out.append(f"network request: {url}")
    return out


def screenshot(driver, path, full_page=False):
    """A PNG of the viewport, or of the whole page (Chromium's own capture beyond the viewport)."""
    params = {"format": "png"}
    if full_page:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        params |= {
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1},
        }
    path.write_bytes(base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", params)["data"]))


@pytest.fixture(scope="module")
def rendered(report_fixture_made, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    stats = report_stats_copy(report_fixture_made, tmp_path_factory)
    out = tmp / "paper.html"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "interference.rendering.render",
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
    from interference.rendering.render import external_resources

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
    with chromium() as browser:
        browser.get(out.as_uri())
        assert problems(browser) == []
        # The raw tables come folded; a reader opens them (and so does the test, to read them).
        folded = browser.execute_script(
            "const d = [...document.querySelectorAll('details.rpt-appendix:not([open])')];"
            "d.forEach(x => x.open = true); return d.length;"
        )
        assert folded >= 4  # the means per resource, the runs, ANOVA, Tukey, the comparison's rows
        page = browser.execute_script(
            """return ({
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
        screenshot(browser, ARTIFACTS / "report_top.png")
        screenshot(browser, ARTIFACTS / "report_full.png", full_page=True)
    assert page["title"].startswith("Microservices in containers, re-run")
    for section in SECTIONS:
        assert section in page["headings"], f"section {section!r} missing"
    assert "Network" not in page["headings"]  # no network microservice in the fixture's data
    assert page["toc"] >= len(SECTIONS)
    # The Findings' forest plot; per runtime: means and IR per microservice (L, S, B) and the heat
    # map; then the runtime comparison, the published-vs-ours scatter and performance against CPU
    # pressure.
    assert page["figures"] == 1 + 2 * (3 + 3 + 1) + 3 and page["decoded"] == page["figures"]
    assert page["captions"][0].startswith("Figure 1. The ") and "scored finding" in page["captions"][0]
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
        "docker / baremetal",
    ]:
        assert phrase in text, phrase
    assert page["width"] <= 1280, "the page scrolls sideways"
    assert (ARTIFACTS / "report_full.png").stat().st_size > 50_000


@requires_chromium
def test_the_browser_check_sees_errors_and_requests(tmp_path):
    """What the report test would fail on: a console error, an exception and a request to the
    network are each reported."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<html><body><script>console.error('boom'); null.x;</script>"
        "<img src='http://192.0.2.1/x.png'></body></html>"
    )
    with chromium() as browser:
        browser.get(page.as_uri())
        found = problems(browser)
    assert any("boom" in p for p in found) and any("null" in p for p in found), found
    assert any(p.startswith("network request: http://192.0.2.1/") for p in found), found
