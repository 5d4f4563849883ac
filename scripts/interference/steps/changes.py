"""Today's results against saved sessions (config `compare_with`), for one study.

  python -m interference.steps.changes --study S --samples P --summary P --environment P \
      --sessions A.tar.gz [B.tar.gz ...] [--threshold 0.05] [--across-definitions] --out P.tsv

Writes P.tsv and, beside it, P.json (per session, what else differs between the two records),
history.tsv (each cell's mean per session, today last, with its change points: history.py),
session_variance.tsv (per subject, the variance between iterations, runs and sessions of each
definition two or more sessions ran) and regression.tsv (today against the saved sessions of
today's definition, when there are two or more, per subject: each cell beyond the subject's
shift, and the shift: stats/regression_check.py; the regression check reads it).

One row per cell of the study's summary table (its group columns but the host) and session:
the relative change of today's mean against the session's, oriented so that negative is worse,
with its 95 % CI at every level measured (stats/session_variance.py: runs and iterations on both
sides; where two or more saved sessions of the session's definition are given, the variance
between sessions too), and a verdict against the threshold t: *changed* when the CI lies beyond
±t, *unchanged* when it lies within ±t, else *inconclusive*. The study's ratios (IRs, ...) are
compared as differences the same way. A session whose study definition (sizes, windows,
iterations, ...) differs from today's is refused naming the key and both values, unless across
definitions is asked for, which every row then states."""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from interference import studies
from interference.core.runtime_names import RENAMED, renamed_config
from interference.stats.descriptive import prepare, valid
from interference.stats.regression_check import COLUMNS as REGRESSION_COLUMNS
from interference.stats.regression_check import regression_rows
from interference.stats.resampling import relative_change
from interference.stats.session_differences import definition_differences, environment_differences, flat
from interference.stats.session_variance import (
    COMPONENT_COLUMNS,
    ITERATIONS,
    NO_VERDICT,
    NONE,
    Between,
    between_runs,
    cell_errors,
    components_table,
    relative_change_ci,
    verdict,
)
from interference.steps.changes_ratios import compare_ratios
from interference.stores.history import history
from interference.stores.sessions import Session, SessionError, load

FIXED = ["session", "session_host", "host"]
MEASURES = [
    "cell", "quantity", "unit", "higher_is_better", "n_then", "n_now", "mean_then", "mean_now",
    "change", "change_ci_low", "change_ci_high", "p_changed", "ci_method", "sessions_pooled", "threshold",
    "verdict",
    "definition",
]  # fmt: skip


def _group(summary: pd.DataFrame) -> list[str]:
    """A cell: the summary's group columns (those before its statistics), the host aside."""
    columns = list(summary.columns)
    return [c for c in columns[: columns.index("n")] if c != "host"]


def _runs(samples: pd.DataFrame, group: list[str]) -> dict[tuple, list[np.ndarray]]:
    """Each cell's valid values per run (repetition; one run where the table has none)."""
    df = valid(prepare(samples, group))
    df = df.assign(value=pd.to_numeric(df["value"], errors="coerce")).dropna(subset=["value"])
    run = df["repetition"].astype(str) if "repetition" in df else pd.Series("1", index=df.index)
    return {
        key: [np.sort(v.to_numpy()) for _, v in g.groupby(run.loc[g.index], sort=True)["value"]]
        for key, g in df.groupby(group, sort=True)
    }


def _values(samples: pd.DataFrame, group: list[str]) -> dict[tuple, np.ndarray]:
    return {k: np.concatenate(v) for k, v in _runs(samples, group).items()}


@functools.cache
def session_runs(path: Path, group: tuple[str, ...]) -> dict[tuple, list[np.ndarray]]:
    """A session's valid values per cell and run, read once for the comparison and the history."""
    return _runs(_read(path), list(group))


def _subject(group: list[str]):
    """What a cell's variance is pooled over: its runtime, microservice and metric (where the
    study has them), across its conditions (cases, partners, instances, ...)."""
    idx = [group.index(c) for c in ("runtime", "target", "metric") if c in group]
    return lambda key: tuple(key[i] for i in idx)


def regression_subject(group: list[str]):
    """What the regression check reads as one table of cells sharing a session's shift: a
    runtime, microservice and metric in one case (where the study has cases). A host's sessions
    shift the cases of one microservice differently: the regression job under act at 13:05 on
    2026-11-28 measured STREAM beside STREAM in Case 2 79 % above all five sessions of the
    morning (beside L +30 %, beside Y −20 %), its other cases unmoved; STREAM's run-to-run SD was
    0.16 in Case 2 and 0.0065 in Case 3b. Pooled over cases, such cells fail the check on the
    host alone."""
    idx = [group.index(c) for c in ("runtime", "target", "metric", "case") if c in group]
    return lambda key: tuple(key[i] for i in idx)


def _definition(session: Session | dict, study: str) -> str:
    """A study's definition (its config but the runtimes), from a session or an environment."""
    environment = session if isinstance(session, dict) else session.environment
    cfg = renamed_config(environment.get("config", {}).get("studies", {}).get(study, {}))
    return json.dumps(flat({k: v for k, v in cfg.items() if k != "runtimes"}), sort_keys=True, default=str)


def _regression(
    study: str, environment: dict, loaded: list[Session], samples: pd.DataFrame, group: list[str],
    threshold: float,
) -> pd.DataFrame:  # fmt: skip
    """Today against the saved sessions of today's definition (regression_check.py)."""
    means = lambda runs: {k: np.concatenate(v).mean() for k, v in runs.items()}  # noqa: E731
    # From the samples, not the summary: a cell the summary leaves out (the drift check's
    # baseline measured again at the end, case 1-end) is still a cell of the sessions.
    flags = prepare(samples, group).groupby(group, sort=False)["higher_is_better"].first()
    higher = {tuple(map(str, k if isinstance(k, tuple) else (k,))): bool(v) for k, v in flags.items()}
    rows = regression_rows(
        [
            means(session_runs(s.samples(study), tuple(group)))
            for s in siblings_of(environment, loaded, study)
        ],
        means(_runs(samples, group)),
        regression_subject(group),
        higher,
        threshold,
        lambda key: " ".join(f"{c}={v}" for c, v in zip(group, key) if v != ""),
    )
    return pd.DataFrame(rows, columns=REGRESSION_COLUMNS)


def siblings_of(session: Session | dict, sessions: list[Session], study: str) -> list[Session]:
    """The sessions (this one included) that ran the same definition of the study as a session
    or as today's environment."""
    return [
        s for s in sessions if study in s.studies and _definition(s, study) == _definition(session, study)
    ]


def _means_between(siblings: list[Session], study: str, group: list[str]) -> dict[tuple, Between]:
    if len(siblings) < 2:
        return {}
    return between_runs([session_runs(s.samples(study), tuple(group)) for s in siblings], _subject(group))


def _read(path: Path) -> pd.DataFrame:
    """A samples table, today's or a saved session's (read with today's runtime names)."""
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    if "runtime" in df:
        df["runtime"] = df["runtime"].replace(RENAMED)
    return df


def study_differences(today: dict, then: dict, study: str) -> list[tuple[str, object, object]]:
    """definition_differences without the keys that change no run of either config (the
    study's inert_keys: e.g. where a network server runs, in a config without one)."""
    kind = studies.registry().get(study)
    part = lambda config: config.get("studies", {}).get(study, {})  # noqa: E731
    inert = kind.inert_keys(part(today)) & kind.inert_keys(part(then)) if kind else set()
    return [d for d in definition_differences(today, then, study) if d[0] not in inert]


def compare(
    study: str, samples: pd.DataFrame, summary: pd.DataFrame, environment: dict, session: Session,
    threshold: float, across: bool, summary_dir: Path | None = None, siblings: list[Session] = (),
) -> pd.DataFrame:  # fmt: skip
    """Each summary cell's mean and each declared ratio (today's tables in summary_dir), today's
    against the session's; siblings: the other saved sessions given, of which those of the
    session's definition measure the variance between sessions."""
    group = _group(summary)
    columns = FIXED + group + MEASURES
    if study not in session.studies:
        return pd.DataFrame(columns=columns)
    differ = study_differences(
        environment["config"], renamed_config(session.environment.get("config", {})), study
    )
    if differ and not across:
        key, now, was = differ[0]
        raise SessionError(
            f"session {session.name} ran another definition of study {study}: {key} was {was!r}, this "
            f"config has {now!r}"
            + (f" (and {len(differ) - 1} more keys)" if len(differ) > 1 else "")
            + "; set compare_across_definitions: true to compare anyway"
        )
    definition = "; ".join(f"{k}: {was!r} then, {now!r} now" for k, now, was in differ)
    siblings = siblings_of(session, list(siblings) or [session], study)
    between = _means_between(siblings, study, group)
    subject = _subject(group)
    now = _runs(samples, group)
    then = session_runs(session.samples(study), tuple(group))
    now_err, then_err = cell_errors(now, subject), cell_errors(then, subject)
    rows = []
    for r in summary.drop_duplicates(group).itertuples(index=False):
        r = r._asdict()
        key = tuple(str(r[c]) for c in group)
        a = np.concatenate(now[key]) if key in now else np.empty(0)
        b = np.concatenate(then[key]) if key in then else np.empty(0)
        higher = str(r["higher_is_better"]).strip().lower() in ("true", "1")
        change, low, high, p, method = math.nan, math.nan, math.nan, math.nan, ""
        bt = between.get(subject(key), NONE)
        covers_runs = True
        if a.size and b.size and b.mean() != 0:
            change = relative_change(a.mean(), b.mean(), higher)
            low, high, df, p = relative_change_ci(
                a.mean(), now_err[key], b.mean(), then_err[key], bt, higher, threshold
            )
            levels = {now_err[key].level, then_err[key].level}
            level = ITERATIONS if ITERATIONS in levels else now_err[key].level
            covers_runs = level != ITERATIONS or bool(bt.df)
            if math.isfinite(low):
                method = (
                    f"log ratio, t with {df:.0f} df: the spread of {len(siblings)} sessions (their runs and iterations included)"
                    if bt.df
                    else f"log ratio, t with {df:.0f} df: {level}"
                )
                method += "" if covers_runs else f"; {NO_VERDICT}"
        rows.append(
            {
                "session": session.name,
                "session_host": session.host,
                "host": environment["config"]["host"],
                **{c: r[c] for c in group},
                "cell": " ".join(f"{c}={r[c]}" for c in group if str(r[c]) != ""),
                "quantity": "mean",
                "unit": r.get("unit", ""),
                "higher_is_better": higher,
                "n_then": b.size,
                "n_now": a.size,
                "mean_then": b.mean() if b.size else math.nan,
                "mean_now": a.mean() if a.size else math.nan,
                "change": change,
                "change_ci_low": low,
                "change_ci_high": high,
                "p_changed": p,
                "ci_method": method,
                "sessions_pooled": len(siblings) if bt.df else 1,
                "threshold": threshold,
                "verdict": verdict(low, high, threshold, covers_runs),
                "definition": definition,
            }
        )
    ratios = (
        compare_ratios(study, summary_dir, session, threshold, definition, siblings) if summary_dir else []
    )
    return pd.DataFrame(rows + ratios, columns=columns)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", required=True)
    ap.add_argument("--samples", type=Path, required=True)
    ap.add_argument("--summary", type=Path, required=True)
    ap.add_argument("--environment", type=Path, required=True)
    ap.add_argument("--sessions", type=Path, nargs="+", required=True)
    ap.add_argument("--threshold", type=float, default=0.05)
    ap.add_argument("--across-definitions", action="store_true")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    environment = json.loads(a.environment.read_text())
    samples, summary = _read(a.samples), _read(a.summary)
    frames, records, past = [], {}, []
    group = _group(summary)
    try:
        with tempfile.TemporaryDirectory(prefix="session-") as tmp:
            loaded = [load(source, Path(tmp) / str(i)) for i, source in enumerate(a.sessions)]
            for session in loaded:
                frames.append(
                    compare(a.study, samples, summary, environment, session, a.threshold,
                            a.across_definitions, a.summary.parent, loaded)
                )  # fmt: skip
                # What else changed between the sessions (the report's Changes section says it).
                records[session.name] = {
                    "host": session.host,
                    "saved_at": session.saved_at,
                    "differences": environment_differences(environment, session.environment),
                }
                if a.study in session.studies:
                    runs = session_runs(session.samples(a.study), tuple(group))
                    past.append(
                        (session.name, session.saved_at, {k: np.concatenate(v) for k, v in runs.items()})
                    )
            # The variance between sessions of each definition that two or more of them ran.
            by_definition: dict[str, dict] = {}
            for session in loaded:
                if a.study in session.studies:
                    runs = session_runs(session.samples(a.study), tuple(group))
                    by_definition.setdefault(_definition(session, a.study), {})[session.name] = runs
            components = [
                row for found in by_definition.values() for row in components_table(found, _subject(group))
            ]
            regression = _regression(a.study, environment, loaded, samples, group, a.threshold)
    except SessionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pd.DataFrame(components, columns=COMPONENT_COLUMNS).to_csv(
        a.out.with_name("session_variance.tsv"), sep="\t", index=False
    )
    regression.to_csv(a.out.with_name("regression.tsv"), sep="\t", index=False)
    pd.concat(frames, ignore_index=True).to_csv(a.out, sep="\t", index=False)
    a.out.with_suffix(".json").write_text(json.dumps(records, indent=1) + "\n")
    # Each cell over the sessions in the order they were saved, today last (history.py).
    cells = [
        (" ".join(f"{c}={v}" for c, v in zip(group, key) if v != ""), key)
        for key in summary[group].astype(str).drop_duplicates().itertuples(index=False, name=None)
    ]
    history(cells, past, _values(samples, group), a.threshold).to_csv(
        a.out.with_name("history.tsv"), sep="\t", index=False
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
