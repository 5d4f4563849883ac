"""The report's Changes section: today's results against each saved session the config names
(results/stats/<study>/changes.tsv and changes.json, made by changes.py). Every sentence is
computed from those tables: the counts per verdict, the threshold, the largest changes, and
what else differs between the two sessions' records."""

from __future__ import annotations

import datetime as dt
import json
import math

import pandas as pd

from interference.rendering.kit.blocks import Block, appendix, md
from interference.rendering.kit.figures import history as history_figure
from interference.rendering.kit.format import and_list, esc, num, pct, plural
from interference.stores.stats_tables import read_tsv

NUMERIC = [
    "n_then",
    "n_now",
    "mean_then",
    "mean_now",
    "change",
    "change_ci_low",
    "change_ci_high",
    "threshold",
]
ORDER = {"changed": 0, "inconclusive": 1, "unchanged": 2}
VERDICT_CLASS = {"changed": "flag-cell", "unchanged": "agree-cell", "inconclusive": ""}


def _tables(doc) -> list[tuple[str, pd.DataFrame, dict]]:
    out = []
    for study in doc.studies:
        path = doc.stats_dir / study / "changes.tsv"
        if path.exists():
            notes = path.with_suffix(".json")
            out.append(
                (
                    study,
                    read_tsv(path, numeric=NUMERIC),
                    json.loads(notes.read_text()) if notes.exists() else {},
                )
            )
    return out


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _lead(study_title: str, session: str, rows: pd.DataFrame, record: dict) -> str:
    n = rows["verdict"].value_counts()
    changed = rows[rows["verdict"] == "changed"]
    # Means are oriented (negative: worse); a ratio's difference is not, so only means say which.
    means = changed[changed["quantity"] == "mean"] if "quantity" in changed else changed
    worse, better = int((means["change"] < 0).sum()), int((means["change"] > 0).sum())
    t = rows["threshold"].iloc[0]
    text = (
        f"**{esc(study_title)} against session {esc(session)}** (saved {_when(record['saved_at'])} on host "
        f"{esc(record['host'])}): of {plural(len(rows), 'cell')}, {int(n.get('changed', 0))} changed "
        f"({worse} means worse, {better} better), {int(n.get('unchanged', 0))} unchanged and "
        f"{int(n.get('inconclusive', 0))} inconclusive, a change counting when its 95 % CI lies beyond "
        f"±{pct(t, 0, sign=False)} and no change when it lies within."
    )
    if len(changed):
        top = changed.reindex(changed["change"].abs().sort_values(ascending=False).index).iloc[0]
        text += f" The largest: {esc(top['cell'])}, {pct(top['change'])} [{pct(top['change_ci_low'])}, {pct(top['change_ci_high'])}]."
    differences = record.get("differences", [])
    text += (
        f" Besides the study, the records differ in {and_list(esc(d) for d in differences)}."
        if differences
        else " Nothing else differs in the two records (host, engines, images, config outside the study)."
    )
    text += _levels(rows)
    definition = rows["definition"].iloc[0] if "definition" in rows else ""
    if isinstance(definition, str) and definition:
        text += f" **The study's definition differs** ({esc(definition)}): every row compares across it."
    return text


def _levels(rows: pd.DataFrame) -> str:
    """Which levels the means' intervals cover, read from the rows' methods."""
    means = rows[rows["quantity"] == "mean"] if "quantity" in rows else rows
    methods = means["ci_method"].dropna().astype(str)
    levels = sorted({m.split(": ", 1)[1].split("; ")[0] for m in methods if ": " in m})
    if not levels:
        return ""
    # The method names a row that gives no verdict (stats/session_variance.py NO_VERDICT).
    judged = (
        " Some give no verdict (their method says why)." if methods.str.contains("no verdict").any() else ""
    )
    return f" The means' intervals cover {esc(' / '.join(levels))}.{judged}"


def _history(doc, study: str) -> list[Block]:
    """With two or more sessions: each cell's level over them, today last, and its change points."""
    path = doc.stats_dir / study / "history.tsv"
    if not path.exists():
        return []
    h = read_tsv(path, numeric=["order", "n", "mean", "sd"])
    sessions = h.loc[h["session"] != "today", "session"].unique()
    if len(sessions) < 2:
        return []
    points = h.groupby("cell")["change_points"].first().fillna("").astype(str)
    moved = points[points != ""]
    text = f"**{esc(doc.study_title(study))} over {plural(len(sessions), 'session')} and today.** " + (
        f"A change of level (ruptures' PELT over the sessions' means, BIC-like penalty) in "
        f"{plural(len(moved), 'cell')} of {len(points)}: "
        + "; ".join(f"{esc(c)} after {esc(p)}" for c, p in moved.items())
        + "."
        if len(moved)
        else f"No change of level in any of its {plural(len(points), 'cell')} (ruptures' PELT over the "
        "sessions' means, BIC-like penalty)."
    )
    shown = history_figure.chosen(h)
    return [
        md(text),
        doc.figure(
            history_figure.figure(h),
            f"{esc(study)}: the mean of {plural(len(shown), 'cell')} in each session relative to the first, "
            "today last; dashed: a change point (results/stats/" + esc(study) + "/history.tsv).",
            f"Line plots of {len(shown)} cells' means over the sessions.",
        ),
    ]


def _session_variance(doc, study: str) -> list[Block]:
    """With two or more saved sessions of one definition: per subject, the variance between
    iterations, runs and sessions (session_variance.tsv)."""
    path = doc.stats_dir / study / "session_variance.tsv"
    if not path.exists():
        return []
    t = read_tsv(path, numeric=["iteration", "run", "session", "session_share", "df_session"])
    if t.empty:
        return []
    cv = lambda x: pct(math.sqrt(x), 1, sign=False) if x == x and x >= 0 else "–"  # noqa: E731
    rows = [
        [
            r.subject,
            cv(r.iteration),
            cv(r.run),
            cv(r.session),
            pct(r.session_share, 0, sign=False),
            f"{r.df_session:.0f}",
        ]
        for r in t.itertuples(index=False)
    ]
    share = t["session_share"].median()
    return [
        md(
            f"**Variance between sessions** ({esc(doc.study_title(study))}; sessions {esc(t['sessions'].iloc[0])}): "
            f"the median share of the variance that lies between sessions is {pct(share, 0, sign=False)}; every "
            "change above carries it (results/stats/" + esc(study) + "/session_variance.tsv)."
        ),
        appendix(
            "Per subject: the variation between iterations, runs and sessions",
            [doc.table(["Subject", "Iterations (CV)", "Runs (CV)", "Sessions (CV)", "Sessions' share", "df"], rows,
                       "Relative standard deviations at each level (square roots of the variance components); the "
                       "sessions' share of the three variances; the sessions' degrees of freedom.", numeric_from=1)],
        ),
    ]  # fmt: skip


def blocks(doc) -> list[Block]:
    tables = _tables(doc)
    if not tables:
        return []
    out = [
        md(
            "## Changes\n\nToday's results against the saved sessions the config names (`compare_with`): for "
            "each cell of a study's summary, the change of its mean, oriented so that negative is worse, with "
            "its 95 % CI at the levels each row's method names (iterations, runs and, where two or more saved "
            "sessions of one definition are given, the variance between sessions); for each ratio the study "
            "reports (interference ratios, runtime, network and ping-pong ratios, slowdowns), the difference "
            "of today's and the session's, with a CI from their two (and the sessions' variance likewise)."
        )
    ]
    for study, df, notes in tables:
        out += _history(doc, study) + _session_variance(doc, study)
        for session, rows in df.groupby("session", sort=False):
            out.append(md(_lead(doc.study_title(study), session, rows, notes.get(session, {}))))
            shown = rows.assign(_o=rows["verdict"].map(ORDER), _a=-rows["change"].abs()).sort_values(
                ["_o", "_a"]
            )
            shown = shown[shown["verdict"] != "unchanged"]
            if shown.empty:
                continue
            classes = list(shown["verdict"].map(VERDICT_CLASS).fillna(""))
            out.append(
                doc.table(
                    ["Cell", "Then", "Now", "Change [95 % CI]", "Verdict"],
                    [
                        [
                            r["cell"],
                            f"{num(r['mean_then'])} {r['unit']} (n={int(r['n_then'])})",
                            f"{num(r['mean_now'])} {r['unit']} (n={int(r['n_now'])})",
                            f"{pct(r['change'])} [{pct(r['change_ci_low'])}, {pct(r['change_ci_high'])}]",
                            r["verdict"],
                        ]
                        for _, r in shown.iterrows()
                    ],
                    f"Cells of {esc(study)} that changed or may have, against session {esc(session)} "
                    f"(results/stats/{esc(study)}/changes.tsv); the {plural(int((rows['verdict'] == 'unchanged').sum()), 'unchanged cell')} "
                    "are in the table file.",
                    text_cols=(0, 4),
                    cell_class=lambda i, j, classes=classes: classes[i] if j == 4 else "",
                )
            )
    return out
