"""The regression check's statistics: has a cell changed, today against two or more saved
sessions of its definition, beyond what sessions of this host differ by?

Sessions of one host differ mostly by a shift that a whole session shares (the boot, the host's
load that day): on the 2-core VM two baselines saved 13 minutes apart and a session two hours
later differed by up to 60 % in 25 of 208 cells, nothing in the code having changed. Judged
cell by cell against that shift, with the few degrees of freedom that two or three sessions
give (k − 1), a check can only find changes of many times the shift. So each subject (runtime,
microservice, metric) is read as a two-way table of log cell means, sessions × cells
(conditions: cases, partners, instances):

  log mean[s, c] = cell level[c] + session shift[s] + residual[s, c]

and two questions are asked of today's row:

- **a cell beyond its subject's shift**: today's log ratio to the sessions' mean in that cell,
  less today's average over the subject's cells. Under the model it is normal with variance
  σ²·(1 + 1/k)·(1 − 1/C), where σ² is the residual variance of the saved sessions' table
  ((k − 1)(C − 1) degrees of freedom, independent of it): a t with those df, exact for normal
  residuals. It finds what a code change does to some cells and not others.
- **the subject's shift**: today's average log ratio, against the spread of the saved sessions'
  averages ((1 + 1/k) × their variance, k − 1 df): what moves every cell of a microservice
  alike cannot be told from a session's own shift better than that.

Each gets the p-value that it lies beyond ±threshold (session_variance.beyond_p); the check
applies Holm's procedure over all of them (stores/sessions.py). The simulation in
tests/test_session_variance.py gives its error rates."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from scipy import stats

from interference.stats.session_variance import beyond_p

CELL, SUBJECT = "cell beyond its subject's shift", "subject's shift"
COLUMNS = [
    "subject", "cell", "question", "sessions", "cells", "log_change", "change", "change_ci_low",
    "change_ci_high", "df", "p_changed", "threshold",
]  # fmt: skip


def _oriented(log_change: float, half: float, higher: bool) -> tuple[float, float, float]:
    """The relative change and its interval, negative worse (as changes.tsv orients them)."""
    low, mid, high = (math.exp(log_change + d) - 1 for d in (-half, 0.0, half))
    return (mid, low, high) if higher else (-mid, -high, -low)


def _question(
    base: dict, question: str, cell: str, log_change: float, se: float, df: float, higher: bool
) -> dict:
    threshold = base["threshold"]
    t = stats.t.ppf(0.975, df) if df > 0 and math.isfinite(se) else math.nan
    change, low, high = _oriented(log_change, t * se, higher)
    p = beyond_p(log_change, se, df, math.log(1 - threshold), math.log(1 + threshold))
    return {
        **base, "cell": cell, "question": question, "log_change": log_change, "change": change,
        "change_ci_low": low, "change_ci_high": high, "df": df, "p_changed": p,
    }  # fmt: skip


def regression_rows(
    saved: list[dict[tuple, float]],
    today: dict[tuple, float],
    subject: Callable[[tuple], tuple],
    higher: dict[tuple, bool],
    threshold: float,
    label: Callable[[tuple], str] = lambda key: " ".join(map(str, key)),
) -> list[dict]:
    """The two questions for every subject whose cells all k ≥ 2 saved sessions and today ran
    (cells some session lacks are left out), from the cells' means."""
    k = len(saved)
    if k < 2:
        return []
    by_subject = defaultdict(list)
    for key, value in today.items():
        if value > 0 and all(s.get(key, 0) > 0 for s in saved):
            by_subject[subject(key)].append(key)
    rows = []
    for subj, keys in sorted(by_subject.items()):
        keys = sorted(keys)
        table = np.log([[s[key] for key in keys] for s in saved])  # sessions × cells
        ratio = np.log([today[key] for key in keys]) - table.mean(axis=0)  # today against their mean
        shift, cells, up = ratio.mean(), len(keys), higher[keys[0]]
        base = {"subject": " ".join(subj), "sessions": k, "cells": cells, "threshold": threshold}
        spread = table.mean(axis=1).var(ddof=1) * (1 + 1 / k)
        rows.append(_question(base, SUBJECT, "", shift, math.sqrt(spread), k - 1, up))
        if cells < 2:
            continue
        residual = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + table.mean()
        df = (k - 1) * (cells - 1)
        se = math.sqrt(float((residual**2).sum()) / df * (1 + 1 / k) * (1 - 1 / cells))
        rows += [_question(base, CELL, label(key), r - shift, se, df, up) for key, r in zip(keys, ratio)]
    return rows
