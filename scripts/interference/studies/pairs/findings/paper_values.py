"""The papers' own value of a finding's mean IR, from their printed, computed or stated IRs
(report/published/), picked by the same Selector as our cells."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from interference.studies.pairs.selection import Selector
from interference.studies.pairs.statistics.published import published_ir, read_published


@functools.cache
def _papers_irs(published_dir: Path) -> pd.DataFrame:
    """Every paper's IRs (printed, computed from its means, or stated), read once per folder."""
    return published_ir(*(read_published(published_dir, n) for n in ("interference_ratios", "means")))


def published_cells(published_dir: Path, args: dict) -> pd.Series:
    """The paper's own IR cells a finding's args pick, one per case, target and partner (as ours:
    a target's metrics averaged per pairing and case); empty without `paper` in args."""
    paper = args.get("paper")
    if not paper:
        return pd.Series(dtype=float)
    p = _papers_irs(Path(published_dir))
    p = Selector.of(args).rows(p[p["paper"] == paper])
    return p.groupby(["case", "target", "partner"])["ir"].mean()


def _published_mean(ctx, args: dict) -> tuple[float | None, str]:
    """The paper's own value of the same mean (its printed, computed or stated IRs)."""
    per_pair = published_cells(ctx.published_dir, args)
    if per_pair.empty:
        return None, ""
    n = len(per_pair)
    return float(
        per_pair.mean()
    ), f"mean of the paper's {n} pairing{'s' if n > 1 else ''} and cases" if n > 1 else "the paper's IR"
