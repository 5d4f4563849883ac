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


def appendix(title: str, blocks: list[Block]) -> list[Block]:
    """Blocks folded into one collapsed <details> (the raw tables a reader opens on demand; a
    printed page shows the title only). One HTML block, so that both renderers keep the
    nesting: Markdown blocks become HTML here (mistune, which nbconvert also uses)."""
    import html

    import mistune

    inner = "".join(mistune.html(b.content) if b.kind == "md" else str(b.content) for b in blocks)
    if not inner.strip():
        return []
    return [
        raw_html(
            f'<details class="rpt-appendix"><summary>{html.escape(title)}</summary>\n{inner}\n</details>'
        )
    ]


def fold(title: str, blocks: list[Block], keep: int = 1) -> list[Block]:
    """The first `keep` blocks as they are (the sentence a reader needs), the rest folded."""
    return blocks[:keep] + appendix(title, blocks[keep:])
