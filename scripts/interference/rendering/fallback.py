"""The fallback renderer, where the Quarto CLI is not installed: the assembled .qmd becomes a
notebook (jupytext), is executed (nbclient, a kernel of this Python) and exported to one
self-contained HTML page (nbconvert, the template in template/), with a table of
contents added. render.py chooses between Quarto and this."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

from interference.rendering.common import (
    KERNEL_NAME,
    TEMPLATE_DIR,
    TEMPLATE_NAME,
    RenderError,
    external_resources,
    split_front_matter,
)


def cell_options(source: str) -> tuple[dict, str]:
    """Quarto's `#| key: value` lines at the top of a cell, and the code without them."""
    lines = source.splitlines()
    opts = []
    i = 0
    while i < len(lines) and lines[i].startswith("#|"):
        opts.append(lines[i][2:].strip())
        i += 1
    parsed = yaml.safe_load("\n".join(opts)) if opts else {}
    return (parsed or {}), "\n".join(lines[i:])


def fallback_versions() -> dict:
    import jupytext
    import nbclient
    import nbconvert

    return {
        "nbconvert": nbconvert.__version__,
        "nbclient": nbclient.__version__,
        "jupytext": jupytext.__version__,
    }


def fallback_generator() -> str:
    v = fallback_versions()
    return (
        f"nbconvert {v['nbconvert']} (lab template, no CDN scripts) with nbclient {v['nbclient']} "
        f"and jupytext {v['jupytext']} (the .qmd read as R Markdown), the Quarto CLI not being installed"
    )


def qmd_to_notebook(text: str, params: dict):
    """The .qmd as a notebook whose cells carry nbconvert's removal tags for Quarto's options."""
    import jupytext
    import nbformat

    front, body = split_front_matter(text)
    nb = jupytext.reads(body, fmt="Rmd")
    execute = front.get("execute") or {}
    echo_default = execute.get("echo", True)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        opts, code = cell_options(cell.source)
        tags = list(opts.get("tags") or [])
        cell.metadata["quarto"] = opts
        if not opts.get("echo", echo_default):
            tags.append("remove_input")
        else:
            cell.metadata["display_source"] = code
        if opts.get("include") is False:
            tags.append("remove_cell")
        if opts.get("output") is False:
            tags.append("remove_output")
        cell.metadata["tags"] = tags
        cells.append(cell)
        if "parameters" in tags:
            injected = "\n".join(f"{k} = {v!r}" for k, v in params.items())
            cells.append(
                nbformat.v4.new_code_cell(
                    "# Injected parameters\n" + injected,
                    metadata={"tags": ["injected-parameters", "remove_cell"]},
                )
            )
    nb.cells = cells
    return front, nb


def kernel_spec_dir(root: Path) -> None:
    """A kernel spec for this very Python (so the report never runs in another environment)."""
    d = root / "kernels" / KERNEL_NAME
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python (interference report)",
                "language": "python",
            }
        )
    )


def execute(nb, cwd: Path, warning: bool, timeout: int = 600):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    with tempfile.TemporaryDirectory(prefix="interference-kernel-") as tmp:
        kernel_spec_dir(Path(tmp))
        old = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = tmp + (os.pathsep + old if old else "")
        try:
            client = NotebookClient(
                nb,
                timeout=timeout,
                kernel_name=KERNEL_NAME,
                resources={"metadata": {"path": str(cwd)}},
            )
            client.execute()
        except CellExecutionError as e:
            raise RenderError(f"a cell of the report failed:\n{e}") from None
        finally:
            if old is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = old
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        asis = cell.metadata.get("quarto", {}).get("output") == "asis"
        outputs = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr" and not warning:
                continue
            if asis and o.get("output_type") == "stream" and o.get("name") == "stdout":
                # Quarto includes printed text of an `output: asis` cell as Markdown.
                o = {"output_type": "display_data", "data": {"text/markdown": o["text"]}, "metadata": {}}
            outputs.append(o)
        cell["outputs"] = outputs
        if "display_source" in cell.metadata:
            cell.source = cell.metadata.pop("display_source")
    return nb


def add_toc(html_text: str, depth: int = 3) -> str:
    """Fill <nav id="TOC"> with the document's h2..h<depth> (ids added where missing)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    nav = soup.find("nav", id="TOC")
    if nav is None:
        return html_text
    used = set()
    items = []
    for h in soup.find_all([f"h{i}" for i in range(2, depth + 1)]):
        if h.find_parent("header") or h.find_parent("nav"):
            continue
        for a in h.find_all("a", class_="anchor-link"):
            a.decompose()
        text = h.get_text(" ", strip=True)
        hid = h.get("id") or re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
        base, k = hid, 2
        while hid in used:
            hid = f"{base}-{k}"
            k += 1
        used.add(hid)
        h["id"] = hid
        items.append((int(h.name[1]), hid, text))
    if not items:
        nav.decompose()
        return str(soup)
    title = soup.new_tag("h2", attrs={"class": "rpt-toc-title"})
    title.string = "Contents"
    nav.append(title)
    root = soup.new_tag("ul")
    nav.append(root)
    stack = [(1, root)]
    last_li = None
    for level, hid, text in items:
        while level < stack[-1][0] + 1 and len(stack) > 1:
            stack.pop()
        if level > stack[-1][0] + 1 and last_li is not None:
            sub = soup.new_tag("ul")
            last_li.append(sub)
            stack.append((stack[-1][0] + 1, sub))
        li = soup.new_tag("li")
        a = soup.new_tag("a", href=f"#{hid}")
        a.string = text
        li.append(a)
        stack[-1][1].append(li)
        last_li = li
    return str(soup)


def render_fallback(qmd: Path, out: Path, params: dict) -> str:
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    generator = fallback_generator()
    text = qmd.read_text()
    front, nb = qmd_to_notebook(text, {**params, "renderer": generator})
    t0 = time.perf_counter()
    nb = execute(nb, qmd.parent, warning=(front.get("execute") or {}).get("warning", True))
    print(f"executed in {time.perf_counter() - t0:.1f} s", flush=True)
    html_opts = (
        ((front.get("format") or {}).get("html") or {}) if isinstance(front.get("format"), dict) else {}
    )
    css = ""
    css_files = html_opts.get("css") or []
    for name in [css_files] if isinstance(css_files, str) else css_files:
        css += (qmd.parent / name).read_text() + "\n"
    title = str(front.get("title", qmd.stem))
    nb.metadata["title"] = title
    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = {"remove_cell"}
    c.TagRemovePreprocessor.remove_all_outputs_tags = {"remove_output"}
    c.TagRemovePreprocessor.remove_input_tags = {"remove_input"}
    c.HTMLExporter.exclude_input_prompt = True
    c.HTMLExporter.exclude_output_prompt = True
    c.HTMLExporter.embed_images = True
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATE_DIR)]
    c.HTMLExporter.template_name = TEMPLATE_NAME
    exporter = HTMLExporter(config=c)
    body, _ = exporter.from_notebook_node(
        nb,
        resources={
            "report_title": title,
            "report_subtitle": str(front.get("subtitle", "")),
            "report_generator": generator,
            "report_css": css,
        },
    )
    if html_opts.get("toc", False):
        body = add_toc(body, int(html_opts.get("toc-depth", 3)))
    found = external_resources(body)
    if found:
        raise RenderError("the page would fetch from the network: " + "; ".join(found[:10]))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(body)
    tmp.replace(out)
    return generator


# ---------------------------------------------------------------------------------------------
