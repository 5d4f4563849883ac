"""Today's results against saved sessions (config `compare_with`), for one study.

  python -m interference.changes --study S --samples P --summary P --environment P \
      --sessions A.tar.gz [B.tar.gz ...] [--threshold 0.05] [--across-definitions] --out P.tsv

Writes P.tsv and, beside it, P.json (per session, what else differs between the two records) and
history.tsv (each cell's mean per session, today last, with its change points: history.py).

One row per cell of the study's summary table (its group columns but the host) and session:
the relative change of today's mean against the session's, oriented so that negative is worse,
with its 95 % bootstrap CI (resampling.relative_change_ci: the statistic and interval of the
interference ratio and of the drift check), and a verdict against the threshold t:
*changed* when the CI lies beyond ±t, *unchanged* when it lies within ±t, else *inconclusive*.
A session whose study definition (sizes, windows, iterations, ...) differs from today's is
refused naming the key and both values, unless across definitions is asked for, which every
row then states."""

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
from interference.descriptive import prepare, valid
from interference.history import history
from interference.resampling import relative_change, relative_change_ci
from interference.sessions import Session, SessionError, load

CHANGED, UNCHANGED, INCONCLUSIVE = "changed", "unchanged", "inconclusive"
N_RESAMPLES = 2000
SEED = 20261124
FIXED = ["session", "session_host", "host"]
MEASURES = [
    "cell", "quantity", "unit", "higher_is_better", "n_then", "n_now", "mean_then", "mean_now",
    "change", "change_ci_low", "change_ci_high", "ci_method", "threshold", "verdict", "definition",
]  # fmt: skip


def verdict(low: float, high: float, threshold: float) -> str:
    """The rule: a CI beyond ±threshold has changed, one within it has not, else we cannot say."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return INCONCLUSIVE
    if low > threshold or high < -threshold:
        return CHANGED
    if -threshold <= low and high <= threshold:
        return UNCHANGED
    return INCONCLUSIVE


def _flat(d, prefix=""):
    out = {}
    for k, v in (d or {}).items():
        key = f"{prefix}{k}"
        out |= _flat(v, key + ".") if isinstance(v, dict) else {key: v}
    return out


def definition_differences(today: dict, then: dict, study: str) -> list[tuple[str, object, object]]:
    """(key, today's value, the session's) for every key of the study's config part that differs
    (its runtimes aside: a runtime measured in only one of them has no cells to compare)."""
    now = _flat({k: v for k, v in today["studies"].get(study, {}).items() if k != "runtimes"})
    was = _flat({k: v for k, v in then.get("studies", {}).get(study, {}).items() if k != "runtimes"})
    return [(k, now.get(k), was.get(k)) for k in sorted(now.keys() | was.keys()) if now.get(k) != was.get(k)]


def environment_differences(today: dict, then: dict) -> list[str]:
    """What else differs between the two sessions' records: hosts, engines (version, kernel,
    drivers), images and config keys outside the studies, in words."""
    out = []
    hosts = (then.get("config", {}).get("host"), today.get("config", {}).get("host"))
    if hosts[0] != hosts[1]:
        out.append(f"host {hosts[0]} → {hosts[1]}")
    # The machine each session ran on (its own host's record), then the engines per runtime.
    a, b = then.get("hosts", {}).get(hosts[0], {}), today.get("hosts", {}).get(hosts[1], {})
    out += [
        f"host's {k}: {a[k]} → {b[k]}" for k in sorted(a.keys() & b.keys() - {"hostname"}) if a[k] != b[k]
    ]
    a, b = _flat(then.get("engines", {})), _flat(today.get("engines", {}))
    out += [f"engine {k}: {a[k]} → {b[k]}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    ids = {(i.get("runtime"), i.get("image")): i.get("id") for i in then.get("images", [])}
    for i in today.get("images", []):
        old = ids.get((i.get("runtime"), i.get("image")))
        if old and old != i.get("id"):
            out.append(
                f"image {i.get('runtime')}/{i.get('image')}: {str(old)[7:19]} → {str(i.get('id'))[7:19]}"
            )
    # The config outside the studies, but the keys that only say what to compare with.
    skip = ("studies", "host", "compare_with", "compare_across_definitions", "change_threshold")
    a = _flat({k: v for k, v in then.get("config", {}).items() if k not in skip})
    b = _flat({k: v for k, v in today.get("config", {}).items() if k not in skip})
    out += [
        f"config {k}: {a.get(k)} → {b.get(k)}" for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
    ]
    return out


def _group(summary: pd.DataFrame) -> list[str]:
    """A cell: the summary's group columns (those before its statistics), the host aside."""
    columns = list(summary.columns)
    return [c for c in columns[: columns.index("n")] if c != "host"]


def _values(samples: pd.DataFrame, group: list[str]) -> dict[tuple, np.ndarray]:
    df = valid(prepare(samples, group))
    df = df.assign(value=pd.to_numeric(df["value"], errors="coerce")).dropna(subset=["value"])
    return {k: g.to_numpy() for k, g in df.groupby(group, sort=True)["value"]}


@functools.cache
def session_values(path: Path, group: tuple[str, ...]) -> dict[tuple, np.ndarray]:
    """A session's valid values per cell, read once for the comparison and the history."""
    return _values(_read(path), list(group))


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def compare(
    study: str, samples: pd.DataFrame, summary: pd.DataFrame, environment: dict, session: Session,
    threshold: float, across: bool, summary_dir: Path | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Each summary cell's mean and each declared ratio (today's tables in summary_dir), today's
    against the session's."""
    group = _group(summary)
    columns = FIXED + group + MEASURES
    if study not in session.studies:
        return pd.DataFrame(columns=columns)
    differ = definition_differences(environment["config"], session.environment.get("config", {}), study)
    if differ and not across:
        key, now, was = differ[0]
        raise SessionError(
            f"session {session.name} ran another definition of study {study}: {key} was {was!r}, this "
            f"config has {now!r}"
            + (f" (and {len(differ) - 1} more keys)" if len(differ) > 1 else "")
            + "; set compare_across_definitions: true to compare anyway"
        )
    definition = "; ".join(f"{k}: {was!r} then, {now!r} now" for k, now, was in differ)
    now, then = _values(samples, group), session_values(session.samples(study), tuple(group))
    rows = []
    for r in summary.drop_duplicates(group).itertuples(index=False):
        r = r._asdict()
        key = tuple(str(r[c]) for c in group)
        a, b = now.get(key, np.empty(0)), then.get(key, np.empty(0))
        higher = str(r["higher_is_better"]).strip().lower() in ("true", "1")
        change, low, high, method = math.nan, math.nan, math.nan, ""
        if a.size and b.size and b.mean() != 0:
            change = relative_change(a.mean(), b.mean(), higher)
            if min(a.size, b.size) >= 2:
                low, high, method, _ = relative_change_ci(
                    a, b, higher, N_RESAMPLES, SEED, (session.name, *key)
                )
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
                "ci_method": method,
                "threshold": threshold,
                "verdict": verdict(low, high, threshold),
                "definition": definition,
            }
        )
    ratios = compare_ratios(study, summary_dir, session, threshold, definition) if summary_dir else []
    return pd.DataFrame(rows + ratios, columns=columns)


Z = 1.959963984540054  # the normal 97.5 % quantile: the tables' CIs are 95 %


def compare_ratios(
    study: str, today_dir: Path, session: Session, threshold: float, definition: str
) -> list[dict]:
    """The study's ratios (Study.compared: IRs, runtime, network, ping-pong ratios, slowdowns),
    today's against the session's: their difference, with a 95 % CI from the two tables' CIs
    (independent, normal: the standard errors' root sum of squares), and the same verdict."""
    rows = []
    for c in studies.get(study).compared:
        then_path = session.root / "stats" / study / f"{c.table}.tsv"
        if not (today_dir / f"{c.table}.tsv").exists() or not then_path.exists():
            continue
        now, then = (_read(p).set_index(list(c.key)) for p in (today_dir / f"{c.table}.tsv", then_path))
        then = then[~then.index.duplicated()]
        for key, r in now[~now.index.duplicated()].iterrows():
            if key not in then.index:
                continue
            t = then.loc[key]
            a, b = (
                pd.to_numeric(pd.Series([x[c.value], x[c.low], x[c.high]]), errors="coerce") for x in (r, t)
            )
            change = a[0] - b[0]
            se = math.hypot((a[2] - a[1]) / (2 * Z), (b[2] - b[1]) / (2 * Z))
            low, high = (change - Z * se, change + Z * se) if math.isfinite(se) else (math.nan, math.nan)
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
                    "mean_then": b[0],
                    "mean_now": a[0],
                    "change": change,
                    "change_ci_low": low,
                    "change_ci_high": high,
                    "ci_method": "difference, normal from the two CIs",
                    "threshold": threshold,
                    "verdict": verdict(low, high, threshold),
                    "definition": definition,
                }
            )
    return rows


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
        for source in a.sessions:
            with tempfile.TemporaryDirectory(prefix="session-") as tmp:
                session = load(source, Path(tmp))
                frames.append(
                    compare(
                        a.study,
                        samples,
                        summary,
                        environment,
                        session,
                        a.threshold,
                        a.across_definitions,
                        a.summary.parent,
                    )
                )
                # What else changed between the sessions (the report's Changes section says it).
                records[session.name] = {
                    "host": session.host,
                    "saved_at": session.saved_at,
                    "differences": environment_differences(environment, session.environment),
                }
                if a.study in session.studies:
                    past.append(
                        (
                            session.name,
                            session.saved_at,
                            session_values(session.samples(a.study), tuple(group)),
                        )
                    )
    except SessionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
