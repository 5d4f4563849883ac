"""The study's ratios (Study.compared: IRs, runtime, network and ping-pong ratios, slowdowns)
of today against a saved session (changes.py): their difference, with a 95 % CI from the two
tables' CIs and, where sibling sessions of one definition measure it, the variance between
sessions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference import studies
from interference.stats.session_variance import (
    NO_VERDICT,
    NONE,
    WITHIN_ONE_RUN,
    Between,
    difference_ci,
    session_spread,
    verdict,
)
from interference.stores.sessions import Session


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


Z = 1.959963984540054  # the normal 97.5 % quantile: the tables' CIs are 95 %


def _table(session_root: Path, study: str, c) -> pd.DataFrame | None:
    path = session_root / "stats" / study / f"{c.table}.tsv"
    if not path.exists():
        return None
    t = _read(path).set_index(list(c.key))
    return t[~t.index.duplicated()]


def _value_se(row, c) -> tuple[float, float]:
    v, low, high = pd.to_numeric(pd.Series([row[c.value], row[c.low], row[c.high]]), errors="coerce")
    return v, (high - low) / (2 * Z)


def _ratio_between(siblings: list[Session], study: str, c) -> Between:
    """The variance of a ratio between sessions of one definition, pooled over its cells."""
    tables = [t for t in (_table(s.root, study, c) for s in siblings) if t is not None]
    if len(tables) < 2:
        return NONE
    cells = []
    for key in set().union(*(t.index for t in tables)):
        found = [_value_se(t.loc[key], c) for t in tables if key in t.index]
        values, ses = (np.array(x, float) for x in zip(*found))
        cells.append((values, ses**2))
    return session_spread(cells)


def compare_ratios(
    study: str, today_dir: Path, session: Session, threshold: float, definition: str,
    siblings: list[Session] = (),
) -> list[dict]:  # fmt: skip
    """The study's ratios (Study.compared: IRs, runtime, network, ping-pong ratios, slowdowns),
    today's against the session's: their difference, with a 95 % CI from the two tables' CIs
    (normal standard errors) and the variance between sessions where siblings measure it."""
    rows = []
    for c in studies.get(study).compared:
        then = _table(session.root, study, c)
        if not (today_dir / f"{c.table}.tsv").exists() or then is None:
            continue
        between = _ratio_between(list(siblings), study, c)
        now = _read(today_dir / f"{c.table}.tsv").set_index(list(c.key))
        for key, r in now[~now.index.duplicated()].iterrows():
            if key not in then.index:
                continue
            t = then.loc[key]
            (a, se_a), (b, se_b) = _value_se(r, c), _value_se(t, c)
            low, high, df, p = difference_ci(a, se_a, b, se_b, between, threshold)
            # A table that says its interval covers one run's iterations only (the pair study's
            # ci_level), on either side, judges nothing unless sessions measure what runs add.
            covers_runs = bool(between.df) or not {r.get("ci_level"), t.get("ci_level")} & set(WITHIN_ONE_RUN)
            rows.append(
                {
                    "session": session.name,
                    "session_host": session.host,
                    "host": r.get("host", ""),
                    "cell": " ".join(
                        f"{k}={v}" for k, v in zip(c.key, key if isinstance(key, tuple) else (key,)) if str(v)
                    ),
                    "quantity": f"{c.table}.{c.value}",
                    "unit": "",
                    "n_then": pd.to_numeric(t.get("n"), errors="coerce"),
                    "n_now": pd.to_numeric(r.get("n"), errors="coerce"),
                    "mean_then": b,
                    "mean_now": a,
                    "change": a - b,
                    "change_ci_low": low,
                    "change_ci_high": high,
                    "p_changed": p,
                    "ci_method": "difference of the two tables' CIs (normal)"
                    + (
                        f"; the spread of {len(siblings)} sessions instead (t with {df:.0f} df)"
                        if between.df
                        else ""
                    )
                    + ("" if covers_runs else f"; {NO_VERDICT}"),
                    "sessions_pooled": len(siblings) if between.df else 1,
                    "threshold": threshold,
                    "verdict": verdict(low, high, threshold, covers_runs),
                    "definition": definition,
                }
            )
    return rows
