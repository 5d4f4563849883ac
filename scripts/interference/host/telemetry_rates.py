"""Contention rates over intervals: a run's telemetry.tsv (written by host/telemetry.py's
sampler) turned into rates over any interval lying within its samples (an iteration),
interpolating between them, and attached to the parsed rows of the run (the parse step)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.host.telemetry import CLOCK_TICKS, COLUMNS


def read(path: Path) -> pd.DataFrame:
    if not path.exists():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(path, sep="\t", dtype={"source": str, "counter": str})


def _rate(counter: str, delta, seconds) -> tuple[str, object]:
    """A counter's increase over an interval as the column it becomes."""
    if counter.endswith("_us"):  # stall time: a share of the interval
        # At most the whole interval: a sample's time is read just before its counter, so on a
        # saturated machine the counter may run ahead of its timestamp and a share pass 1.
        return counter.removesuffix("_us"), np.minimum(delta / 1e6 / seconds, 1.0)
    if counter == "throttled_ns":
        return "throttled", delta / 1e9 / seconds
    if counter == "cpu_usage_ns":
        return "cpu_cores", delta / 1e9 / seconds
    if counter == "ctxt":
        return "ctxt_per_s", delta / seconds
    if counter == "steal_ticks":  # CPUs' worth of time the hypervisor gave to others
        return "steal_cores", delta / CLOCK_TICKS / seconds
    if counter.startswith("steal_ticks_cpu"):  # one CPU's share of the interval stolen
        return counter.replace("ticks", "share"), delta / CLOCK_TICKS / seconds
    return counter, delta  # events: a count


def rates(samples: pd.DataFrame, starts, ends) -> dict[str, np.ndarray]:
    """One source's counters over each interval [starts[i], ends[i]]: PSI and throttled time as
    a share of the interval, ctxt and CPU time per second, events as counts. Counters are
    interpolated linearly between samples; an interval not wholly within the samples gets NaN."""
    starts, ends = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    out = {}
    for counter, c in samples.groupby("counter"):
        t, v = c["time"].to_numpy(float), c["value"].to_numpy(float)
        inside = (
            (ends > starts) & (starts >= t[0]) & (ends <= t[-1])
            if len(t) >= 2
            else np.zeros(len(starts), bool)
        )
        name, value = _rate(
            counter, np.interp(ends, t, v) - np.interp(starts, t, v), np.where(inside, ends - starts, 1)
        )
        out[name] = np.where(inside, value, np.nan)
    return out


def per_interval(tel: pd.DataFrame, source: str, start: float, end: float) -> dict[str, float]:
    """rates() of one source over one interval, without the NaNs."""
    got = rates(tel[tel["source"] == source], [start], [end])
    return {k: float(v[0]) for k, v in got.items() if not np.isnan(v[0])}


def _entities_of(meta: dict, member) -> list[str]:
    """The entities that ran member k (its containers: "member1", "member1+member2"; no servers)."""
    want = f"member{member}"
    return [
        c["name"]
        for c in meta.get("containers", [])
        if want in c.get("role", "").split("+") and not c["role"].startswith("server")
    ]


def cpu_list(text: str | None) -> list[int] | None:
    """A cpuset list ("0", "0-1", "0,2-3") as CPU numbers; None for none given (every CPU)."""
    if not text:
        return None
    out = []
    for part in str(text).split(","):
        lo, _, hi = part.strip().partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def own_cpus(meta: dict, member) -> list[int] | None:
    """The CPUs member k's container was pinned to (its cpuset), None where it was not."""
    want = f"member{member}"
    for c in meta.get("containers", []):
        if want in c.get("role", "").split("+") and not c["role"].startswith("server"):
            return cpu_list((c.get("limits_requested") or {}).get("cpuset"))
    return None


def _own_steal(extra: pd.DataFrame, cpus: list[int] | None) -> pd.Series:
    """The share of the member's own CPUs' time the hypervisor gave to others: the mean over
    its CPUs (every CPU where it was not pinned) of each one's stolen share. The machine-wide
    steal_cores is lower by construction where the steal falls on the other CPUs."""
    columns = [c for c in extra.columns if c.startswith("steal_share_cpu")]
    if cpus is not None:
        columns = [c for c in columns if int(c.removeprefix("steal_share_cpu")) in cpus]
    return extra[columns].mean(axis=1, skipna=False) if columns else pd.Series(np.nan, index=extra.index)


def attach(df: pd.DataFrame, meta: dict, raw_dir: Path) -> pd.DataFrame:
    """df's rows with the telemetry over each row's [start, end]: the host's (psi_*, ctxt_per_s,
    steal_cores)
    and, for a row of a member, its entity's (cpu_cores, throttled, nr_throttled, memory_failcnt,
    oom_kill; cgroup_psi_* on cgroup v2) and own_steal (the share of its own CPUs' time stolen,
    from the per-CPU lines). Rows without start/end, or a run without telemetry, are returned
    unchanged."""
    info = meta.get("telemetry")
    if not info or df.empty or not {"start", "end"} <= set(df.columns):
        return df
    tel = read(raw_dir / info["file"])
    starts = pd.to_numeric(df["start"], errors="coerce").to_numpy(float)
    ends = pd.to_numeric(df["end"], errors="coerce").to_numpy(float)
    extra = pd.DataFrame(rates(tel[tel["source"] == "host"], starts, ends), index=df.index)
    by_source = dict(iter(tel[tel["source"] != "host"].groupby("source")))
    per_cpu = [c for c in extra.columns if c.startswith("steal_share_cpu")]
    if "member" in df.columns:
        if per_cpu:
            extra["own_steal"] = np.nan
        for member in df["member"].dropna().unique():
            rows = (df["member"] == member).to_numpy() & ~np.isnan(starts)
            if per_cpu:
                extra.loc[rows, "own_steal"] = _own_steal(extra.loc[rows], own_cpus(meta, member))
            # Each row from the first of its member's entities that was sampled before and after
            # it: a cgroup's last counts go with it when its container ends, so a short Case 1
            # iteration between a container's first sample and its end gets no entity values
            # rather than a part of them.
            for name in _entities_of(meta, member):
                if name not in by_source or not rows.any():
                    continue
                got = rates(by_source[name], starts[rows], ends[rows])
                covered = (
                    ~np.all([np.isnan(v) for v in got.values()], axis=0)
                    if got
                    else np.zeros(rows.sum(), bool)
                )
                where = np.flatnonzero(rows)[covered]
                for k, v in got.items():
                    column = "cgroup_" + k if k.startswith("psi_") else k
                    if column not in extra:
                        extra[column] = np.nan
                    extra.loc[df.index[where], column] = v[covered]
                rows[where] = False  # taken
    return pd.concat([df, extra.drop(columns=per_cpu)], axis=1)
