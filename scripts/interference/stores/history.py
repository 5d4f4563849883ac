"""A cell's history over saved sessions (two or more in compare_with): its mean in each session,
in the order they were saved, today last, and a change-point test over all their samples.

The test is ruptures' PELT over the sessions' means with the L2 cost (a change of level) and a
BIC-like penalty, 2·(σ²/n̄)·ln(N): σ² the pooled within-session variance, n̄ the samples per
session, N all samples. A shift of level between two sessions is kept only where it explains
more than that penalty (about 2.4 standard errors of the difference for 20 samples), and is
reported as "after session X" where the levels on either side differ by more than the config's
change_threshold (a statistically clear but negligible shift is not a change). Today's results
count as the last session."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import ruptures

COLUMNS = ["order", "session", "saved_at", "cell", "n", "mean", "sd", "change_points"]


def change_points(series: list[np.ndarray], names: list[str], threshold: float = 0.0) -> list[str]:
    """The sessions after which the level moved by more than `threshold` (relative), as the test
    finds it ([] if none, or too few samples to tell)."""
    kept = [(v, name) for v, name in zip(series, names) if v.size >= 2]
    if len(kept) < 2:
        return []
    # One point per session, its mean; the noise of a mean from the pooled within-session variance.
    means = np.array([v.mean() for v, _ in kept])
    n = np.array([v.size for v, _ in kept])
    within = sum(((v - v.mean()) ** 2).sum() for v, _ in kept) / (n.sum() - len(kept))
    if not within > 0:
        return []
    penalty = 2 * (within / n.mean()) * math.log(n.sum())
    found = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(means.reshape(-1, 1)).predict(pen=penalty)
    # A break at b: the level moves after point b - 1; kept where the segments' levels differ by
    # more than the threshold (the same that makes a cell's change count).
    edges = [0, *found]
    out = []
    for i, b in enumerate(found[:-1]):
        before, after = means[edges[i] : b].mean(), means[b : edges[i + 2]].mean()
        if abs(after - before) > threshold * abs(before):
            out.append(kept[b - 1][1])
    return out


def history(
    cells: list[tuple[str, tuple]],
    sessions: list[tuple[str, float, dict]],
    today: dict,
    threshold: float = 0.0,
) -> pd.DataFrame:
    """Rows per cell and session (saved order, today last); cells: (label, key) pairs; each
    session: (name, saved_at, {key: values}); today: {key: values}."""
    ordered = sorted(sessions, key=lambda s: s[1]) + [("today", math.inf, today)]
    rows = []
    for label, key in cells:
        series = [values.get(key, np.empty(0)) for _, _, values in ordered]
        names = [name for name, _, _ in ordered]
        points = ", ".join(change_points(series, names, threshold))
        for order, ((name, saved_at, _), v) in enumerate(zip(ordered, series)):
            rows.append(
                {
                    "order": order,
                    "session": name,
                    "saved_at": saved_at if math.isfinite(saved_at) else math.nan,
                    "cell": label,
                    "n": v.size,
                    "mean": v.mean() if v.size else math.nan,
                    "sd": v.std(ddof=1) if v.size > 1 else math.nan,
                    "change_points": points,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)
