"""What a section emits: Markdown text, raw HTML (a table) or a figure, in order; `emit`
displays them in the running notebook (Quarto's or the fallback's kernel)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    kind: str  # "md" | "html" | "fig"
    content: object
    caption: str = ""
    alt: str = ""
    extra: dict = field(default_factory=dict)


def md(text: str) -> Block:
    return Block("md", text)


def raw_html(text: str) -> Block:
    return Block("html", text)


def emit(blocks) -> None:
    from IPython.display import HTML, Markdown, display

    for b in blocks:
        display(Markdown(b.content) if b.kind == "md" else HTML(b.content))
