"""Render report/paper.qmd to one self-contained HTML file (no external requests).

  python -m interference.rendering.render report/paper.qmd --out report/paper.html \\
      --stats-dir results/stats --studies pairs [other ...] [--published-dir report/published] \\
      [--renderer auto|quarto|nbconvert]

Assembly   paper.qmd holds the paper-wide parts; the line starting with SECTIONS_MARK is
           replaced by one section per study given: the study's report_section (a .qmd
           fragment) or report/sections/generic.qmd. The assembled .qmd is written to a
           temporary folder with the CSS and rendered there, so both renderers see one document.

quarto     `quarto render` where the Quarto CLI is on PATH (auto picks it); the .qmd's front
           matter asks for embed-resources. Parameters go in with -P.
nbconvert  the fallback on PyPI libraries, for the same .qmd: jupytext reads it as R Markdown
           (its ```{python} chunks become code cells; jupytext's own .qmd reader would call the
           Quarto CLI), nbclient executes it in the .qmd's folder on this Python's ipykernel,
           nbconvert's HTML exporter writes it with images inline, using template/ (the
           "lab" template without require.js, MathJax or mermaid from CDNs). Quarto's cell options
           echo, include, output (false / asis), warning and tags: [parameters] are honoured.

Both report which renderer made the page (the `renderer` parameter, shown in the document) and
the output is checked for resources fetched from the network. REPORT_RENDERER=quarto|nbconvert
overrides auto."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from interference.rendering.common import RenderError, external_resources, split_front_matter

SCRIPTS_DIR = Path(__file__).resolve().parents[2]
SECTIONS_MARK = "<!-- study sections"
GENERIC_SECTION = Path("sections") / "generic.qmd"  # relative to the paper's folder


# ---------------------------------------------------------------------------------------------
# Assembly: the paper with one section per study


def section_text(study: str, paper_dir: Path) -> str:
    """The study's .qmd fragment, or the generic section for it."""
    from interference import studies

    known = studies.registry()
    fragment = known[study].report_section if study in known else None
    if fragment is not None and Path(fragment).exists():
        return Path(fragment).read_text()
    return (paper_dir / GENERIC_SECTION).read_text().replace("STUDY", study)


def assemble(text: str, study_names: list[str], paper_dir: Path) -> str:
    """paper.qmd with its SECTIONS_MARK line replaced by the studies' sections, in order."""
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith(SECTIONS_MARK)), None)
    if at is None:
        raise RenderError(f"the paper has no line starting with {SECTIONS_MARK!r} to put the sections at")
    sections = "\n".join(section_text(s, paper_dir).rstrip("\n") + "\n" for s in study_names)
    return "".join(lines[:at]) + sections + "".join(lines[at + 1 :])


def write_assembled(qmd: Path, study_names: list[str], folder: Path) -> Path:
    """The assembled .qmd and its stylesheets in folder (rendered there, never in report/)."""
    text = qmd.read_text()
    front, _ = split_front_matter(text)
    html_opts = (front.get("format") or {}).get("html") or {} if isinstance(front.get("format"), dict) else {}
    css = html_opts.get("css") or []
    for name in [css] if isinstance(css, str) else css:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(qmd.parent / name, folder / name)
    out = folder / qmd.name
    out.write_text(assemble(text, study_names, qmd.parent))
    return out


def default_studies(stats_dir: Path) -> list[str]:
    """Without --studies: every registered study with a folder in the stats folder."""
    from interference import studies

    return [name for name in studies.registry() if (stats_dir / name).is_dir()]


# ---------------------------------------------------------------------------------------------
# Quarto


def quarto_version(quarto: str) -> str:
    r = subprocess.run([quarto, "--version"], check=False, capture_output=True, text=True, timeout=60)
    return r.stdout.strip() or "?"


def render_quarto(qmd: Path, out: Path, params: dict, quarto: str) -> str:
    generator = f"Quarto {quarto_version(quarto)}"
    # Quarto writes next to the .qmd; another destination gets the file moved there.
    tmp_name = out.name if out.parent == qmd.parent else f"{qmd.stem}.render-{os.getpid()}.html"
    cmd = [quarto, "render", str(qmd), "--to", "html", "--output", tmp_name]
    for k, v in {**params, "renderer": generator}.items():
        cmd += ["-P", f"{k}:{v}"]
    env = dict(os.environ, QUARTO_PYTHON=sys.executable)
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, check=False, cwd=qmd.parent, env=env)
    produced = qmd.parent / tmp_name
    if r.returncode != 0 or not produced.exists():
        raise RenderError(f"quarto render failed (exit {r.returncode}); its output is above")
    if produced != out:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(produced), out)
    return generator


# ---------------------------------------------------------------------------------------------
# The fallback: jupytext + nbclient + nbconvert


def choose(renderer: str) -> tuple[str, str | None]:
    quarto = shutil.which("quarto")
    if renderer == "auto":
        renderer = "quarto" if quarto else "nbconvert"
    if renderer == "quarto" and not quarto:
        raise RenderError("REPORT_RENDERER/--renderer asks for quarto, but no quarto CLI is on PATH")
    return renderer, quarto


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m interference.rendering.render",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("qmd", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--stats-dir", type=Path, required=True, help="environment.json and <study>/*.tsv (results/stats)"
    )
    ap.add_argument(
        "--studies",
        nargs="+",
        default=None,
        help="the studies' sections, in order (default: those in --stats-dir)",
    )
    ap.add_argument("--published-dir", type=Path, default=None, help="the papers' tables (optional)")
    ap.add_argument(
        "--renderer",
        choices=["auto", "quarto", "nbconvert"],
        default=os.environ.get("REPORT_RENDERER", "auto"),
    )
    a = ap.parse_args(argv)
    study_names = a.studies if a.studies is not None else default_studies(a.stats_dir)
    params = {
        "stats_dir": str(a.stats_dir.resolve()),
        "published_dir": str(a.published_dir.resolve()) if a.published_dir else "",
        "studies": ",".join(study_names),
        "scripts_dir": str(SCRIPTS_DIR),
    }
    t0 = time.perf_counter()
    try:
        renderer, quarto = choose(a.renderer)
        out = a.out.resolve()
        with tempfile.TemporaryDirectory(prefix="interference-paper-") as tmp:
            qmd = write_assembled(a.qmd.resolve(), study_names, Path(tmp))
            if renderer == "quarto":
                generator = render_quarto(qmd, out, params, quarto)
                found = external_resources(out.read_text())
                if found:
                    print(
                        "warning: the page would fetch from the network: " + "; ".join(found[:10]), flush=True
                    )
            else:
                from interference.rendering.fallback import render_fallback

                generator = render_fallback(qmd, out, params)
    except RenderError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{a.out} rendered by {generator} in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
