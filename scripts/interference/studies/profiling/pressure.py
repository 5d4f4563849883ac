"""pressure.tsv: each microservice's pressure on a resource, in bubble units (cores, MB, MB/s,
Gbit/s), read off the reference probe Q, which is none of the profiled microservices (so no pair
measurement enters the fit).

Per placement and resource the probe ran alone (Case 1u; limited, Case 1, for placement 3b), beside each bubble intensity (its own
sensitivity curve: relative change of its rate, negative = slower) and beside each microservice.
The curve, anchored at (0, 0) and made monotone non-increasing (more bubble never helps the
probe: a rise is noise), is inverted at the probe's degradation beside the microservice: the
bubble intensity that slows the probe as much. No degradation gives 0; more than the largest
bubble gives the largest intensity, clipped (`note` says so). The CI is a percentile bootstrap:
each group's values resampled (its runs' means where every group ran at least twice, else its
iterations), the whole computation repeated per resample. A microservice the probe ran beside
without one valid sample (all outside the window, failed or under steal: e.g. a short window
beside a slow member) still gets its row, its pressure empty and `note` saying why, so that the
predictor can say why it cannot predict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from interference.stats.descriptive import prepare, valid
from interference.stats.resampling import relative_change, rng_for
from interference.studies.profiling.plan import ALONE_CASES, PROBE, baseline_case
from interference.studies.profiling.profiles import monotone_nonincreasing
from interference.studies.profiling.statistics import N_RESAMPLES, SEED, TEXT, read

COLUMNS = ["host", "runtime", "microservice", "placement", "resource", "pressure", "ci_low", "ci_high",
           "ci_level", "note"]  # fmt: skip
NO_DEGRADATION = "the probe is not slower beside it: pressure 0"
CLIPPED = "the probe is slower beside it than beside the largest bubble: clipped at the largest intensity"


def invert(intensities, curve, degradation: float) -> tuple[float, str]:
    """The intensity at which the probe's curve (degradations at increasing intensities, already
    monotone non-increasing and <= 0) reaches `degradation`, linear between the points through
    (0, 0); with a note when it is 0 or clipped."""
    xs = np.concatenate([[0.0], np.asarray(intensities, float)])
    ds = np.concatenate([[0.0], np.asarray(curve, float)])
    if not degradation < 0:
        return 0.0, NO_DEGRADATION
    if degradation < ds[-1]:
        return float(xs[-1]), CLIPPED
    j = int(np.argmax(ds <= degradation))  # the first point at or below it (j >= 1)
    t = (degradation - ds[j - 1]) / (ds[j] - ds[j - 1])
    return float(xs[j - 1] + t * (xs[j] - xs[j - 1])), ""


def probe_curve(means_alone, means_beside) -> np.ndarray:
    """The probe's relative change at each intensity (its rate: higher is better), monotone
    non-increasing and at most 0; vectorised over a leading axis of resamples."""
    d = relative_change(np.asarray(means_beside, float), np.asarray(means_alone, float)[..., None], True)
    return np.minimum(monotone_nonincreasing(d, np.ones(d.shape[-1])), 0)


def pressure_of(alone, bubbles: dict[float, list], beside: list, key: tuple) -> dict:
    """One microservice's pressure from the probe's samples, each group a list of runs (arrays)."""
    xs = sorted(bubbles)
    groups = [alone, *(bubbles[x] for x in xs), beside]
    mean = [np.concatenate(g).mean() for g in groups]
    curve = probe_curve(mean[0], mean[1:-1])
    value, note = invert(xs, curve, relative_change(mean[-1], mean[0], True))
    by_runs = min(len(g) for g in groups) >= 2
    units = [np.array([r.mean() for r in g]) if by_runs else np.concatenate(g) for g in groups]
    if min(u.size for u in units) < 2:
        return dict(
            pressure=value, ci_low=np.nan, ci_high=np.nan, ci_level="", note=note or "fewer than 2 samples"
        )
    rng = rng_for(SEED, key)
    means = np.stack([u[rng.integers(0, u.size, (N_RESAMPLES, u.size))].mean(axis=1) for u in units], -1)
    curves = probe_curve(means[:, 0], means[:, 1:-1])
    d = relative_change(means[:, -1], means[:, 0], True)
    drawn = [invert(xs, c, di)[0] for c, di in zip(curves, d, strict=True)]
    low, high = np.percentile(drawn, [2.5, 97.5])
    level = "runs" if by_runs else "iterations"
    return dict(pressure=value, ci_low=low, ci_high=high, ci_level=level, note=note)


def no_valid_note(planned: pd.DataFrame) -> str:
    """Why the probe's samples beside a microservice give no pressure: how many it made, and why
    none of them counts (prepare()'s flags)."""
    n = len(planned)
    why = [
        f"{int(planned[flag].sum())} {what}"
        for flag, what in (
            ("_outside", "outside the window"),
            ("_failed", "failed"),
            ("_stolen", "under steal"),
        )
        if planned[flag].any()
    ]
    return f"no valid probe sample beside it: {n} made, {', '.join(why)}"


def pressure(inputs: dict[str, Path], jobs: int) -> pd.DataFrame:
    every = prepare(read(inputs["samples"]), TEXT)
    df = valid(every).copy()
    probe = df[(df["target"] == PROBE) & (df["metric"] == df["resource"] + "_rate")]
    # The microservices the probe was run beside, whether or not any of its samples there counts.
    planned = every[(every["target"] == PROBE) & (every["metric"] == every["resource"] + "_rate")]
    planned = planned[~planned["case"].isin(ALONE_CASES) & (planned["partner"] != "")]
    rows = []
    for (host, runtime, resource), g in probe.groupby(["host", "runtime", "resource"], sort=True):
        for placement, p in g[~g["case"].isin(ALONE_CASES)].groupby("case", sort=True):
            # The probe alone as it is placed: unlimited, or limited in placement 3b.
            alone = g[g["case"] == baseline_case(placement)]
            alone = [np.sort(r.to_numpy()) for _, r in alone.groupby("repetition")["value"]]
            with_bubble = p[p["intensity"] != ""]
            bubbles = {
                float(x): [np.sort(r.to_numpy()) for _, r in b.groupby("repetition")["value"]]
                for x, b in with_bubble.groupby("intensity")
            }
            here = planned[
                (planned["host"] == host)
                & (planned["runtime"] == runtime)
                & (planned["resource"] == resource)
                & (planned["case"] == placement)
            ]
            for ms in sorted(set(here["partner"])):
                m = p[p["partner"] == ms]
                beside = [np.sort(r.to_numpy()) for _, r in m.groupby("repetition")["value"]]
                ident = dict(
                    host=host, runtime=runtime, microservice=ms, placement=placement, resource=resource
                )
                if not beside:
                    rows.append(
                        {**ident, "pressure": np.nan, "note": no_valid_note(here[here["partner"] == ms])}
                    )
                    continue
                if not alone or not bubbles:
                    rows.append(
                        {
                            **ident,
                            "pressure": np.nan,
                            "note": "no valid probe samples alone or beside a bubble",
                        }
                    )
                    continue
                rows.append({**ident, **pressure_of(alone, bubbles, beside, tuple(ident.values()))})
    return pd.DataFrame(rows, columns=COLUMNS)
