"""The paper-wide parts of report/paper.qmd: table and figure numbering, the abstract, the host,
engine, images and config, a generic section for a study without its own, and the colophon.

A study's section gets the Document (`doc`) and numbers its tables and figures through it, so
that the numbers run through the whole paper."""

from __future__ import annotations

import importlib
import platform
from datetime import UTC, datetime
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from interference.rendering.kit import environment, figures
from interference.rendering.kit.blocks import Block, md, raw_html
from interference.rendering.kit.format import esc, plural
from interference.rendering.kit.tables import frame_html, table_html
from interference.stores.stats_tables import StatsDir


class Document:
    def __init__(self, stats_dir, published_dir=None, renderer: str = "", studies="", generated_at=None):
        self.stats = StatsDir(stats_dir)
        self.stats_dir = self.stats.root
        self.published_dir = Path(published_dir) if published_dir else None
        self.renderer = renderer
        self.studies = [s for s in (studies.split(",") if isinstance(studies, str) else studies) if s]
        self.generated_at = generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.env = self.stats.environment()
        self.config = self.env.get("config", {})
        self.ms = self.env.get("microservices", {})
        self._tables = 0
        self._figures = 0
        figures.style()

    # -- numbering ---------------------------------------------------------------------------
    def table(self, columns, rows, caption, **kw) -> Block:
        self._tables += 1
        return raw_html(table_html(columns, rows, caption=caption, number=self._tables, **kw))

    def frame(self, df: pd.DataFrame, caption: str) -> Block:
        self._tables += 1
        return raw_html(frame_html(df, caption, self._tables))

    def figure(self, fig: Figure, caption: str, alt: str, width_px: int | None = None) -> Block:
        self._figures += 1
        out = raw_html(figures.embed(fig, self._figures, caption, alt, width_px))
        out.extra["figure"] = fig
        return out

    # -- the studies ---------------------------------------------------------------------------
    def study_config(self, study: str) -> dict:
        return self.config.get("studies", {}).get(study, {})

    @staticmethod
    def study_title(study: str) -> str:
        from interference import studies

        known = studies.registry()
        return known[study].title if study in known else study

    @staticmethod
    def study_hook(study: str, name: str):
        """A function `name` of the study's section module (interference.studies.<s>.section), or None."""
        try:
            module = importlib.import_module(f"interference.studies.{study}.section")
        except ImportError:
            return None
        return getattr(module, name, None)

    # -- paper-wide sections ---------------------------------------------------------------------
    def host_line(self) -> str:
        return environment.host_line(self.env)

    def engine_line(self) -> str:
        return environment.engine_line(self.env)

    def abstract(self) -> list[Block]:
        """The answer first (the scorecard's counts), the environment once, then each study's
        own abstract (section.abstract(doc)) or a sentence on its runs."""
        from interference.rendering import findings_section as section

        if not self.studies:
            return [md(f"No study's results were given to this report ({esc(self.stats_dir)}).")]
        blocks = [md(answer)] if (answer := section.answer(self)) else []
        blocks.append(md(f"Every run here was on {self.host_line()}, with {self.engine_line()}."))
        for study in self.studies:
            hook = self.study_hook(study, "abstract")
            if hook:
                blocks += hook(self)
                continue
            runs = self.stats.table(study, "runs")
            blocks.append(md(f"{self.study_title(study)}: {plural(len(runs), 'run')}."))
        return blocks

    def findings_blocks(self) -> list[Block]:
        """The scorecard of the papers' findings (results/stats/findings.tsv), first in the paper."""
        from interference.rendering import findings_section as section

        return section.blocks(self)

    def changes_blocks(self) -> list[Block]:
        """Today against the saved sessions the config names (none: no section)."""
        from interference.rendering import changes_section

        return changes_section.blocks(self)

    def environment_blocks(self) -> list[Block]:
        return environment.blocks(self)

    def generic_section(self, study: str) -> list[Block]:
        """A study without its own section: its title and the tables it wrote (summary first)."""
        # A study without members writes run_members.tsv with its header only: nothing to show.
        paths = [p for p in self.stats.tables_of(study) if p.stem != "run_members" or _has_rows(p)]
        paths.sort(key=lambda p: (p.stem != "summary", p.stem in ("runs", "run_members"), p.stem))
        blocks = [md(f"## {self.study_title(study)}")]
        if not paths:
            return blocks + [md(f"The study wrote no table under results/stats/{esc(study)}/.")]
        blocks.append(md(f"The tables the study wrote under results/stats/{esc(study)}/, as written."))
        for p in paths:
            df = self.stats.table(study, p.stem, numeric="auto")
            blocks.append(md(f"### {p.stem}"))
            blocks.append(
                self.frame(df, f"results/stats/{esc(study)}/{esc(p.name)} ({plural(len(df), 'row')}).")
            )
        return blocks

    def colophon(self) -> list[Block]:
        versions = {
            "Python": platform.python_version(),
            "pandas": pd.__version__,
            "numpy": np.__version__,
            "matplotlib": matplotlib.__version__,
        }
        read = [f"{s}/{p.name}" for s in self.studies for p in self.stats.tables_of(s)]
        if (self.stats_dir / "environment.json").exists():
            read.append("environment.json")
        pub = (
            [p.name for p in sorted(self.published_dir.glob("*.tsv"))]
            if self.published_dir and self.published_dir.exists()
            else []
        )
        return [
            md(
                f"Rendered {self.generated_at} by **{esc(self.renderer or 'an unnamed renderer')}**, with "
                + ", ".join(f"{k} {v}" for k, v in versions.items())
                + f". Every number in this document is read from results/stats/ ({', '.join(read) or 'nothing'})"
                + (f" and report/published/ ({', '.join(pub)})" if pub else "")
                + f"; the config's sha256 is `{self.env.get('config_sha256', '–')}`."
            )
        ]


def _has_rows(path) -> bool:
    with open(path) as f:
        return sum(1 for _ in zip(range(2), f)) > 1
