"""What both renderers share (render.py with Quarto, fallback.py with nbconvert):
the HTML template's place and the kernel's name, the error they raise, the .qmd's front matter
and the check that the page fetches nothing from the network."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

TEMPLATE_DIR = Path(__file__).resolve().parent
TEMPLATE_NAME = "template"
KERNEL_NAME = "interference-report"


class RenderError(RuntimeError):
    pass


# ---------------------------------------------------------------------------------------------
# The .qmd


def split_front_matter(text: str) -> tuple[dict, str]:
    """(front matter, body) of a Quarto document."""
    m = re.match(r"^---\s*\n(.*?)\n---\s*\n", text, flags=re.DOTALL)
    if not m:
        return {}, text
    return yaml.safe_load(m.group(1)) or {}, text[m.end() :]


def external_resources(html_text: str) -> list[str]:
    """URLs the page would fetch: src of any element, href of <link>, url() and @import in CSS."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    remote = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
    found = []
    for tag in soup.find_all(True):
        for attr in ("src", "data-src", "srcset", "poster"):
            v = tag.get(attr)
            if v and remote.match(str(v)):
                found.append(f"<{tag.name} {attr}={v}>")
        href = tag.get("href") if tag.name in ("link", "script", "iframe", "object", "embed") else None
        if href and remote.match(str(href)):
            found.append(f"<{tag.name} href={tag['href']}>")
    for style in soup.find_all("style"):
        css = re.sub(r"/\*.*?\*/", "", style.get_text(), flags=re.DOTALL)
        for url in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^'\")]+)", css, flags=re.IGNORECASE):
            found.append(f"css url({url})")
        for url in re.findall(
            r"@import\s+(?:url\()?\s*['\"]?((?:https?:)?//[^'\");]+)", css, flags=re.IGNORECASE
        ):
            found.append(f"css @import {url}")
    return found
