"""The pair study's tables (PairsStudy.tables names these functions): each reads the study's
samples and hands them to the module that computes it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from interference.studies.pairs import cases
from interference.studies.pairs.statistics import (
    drift,
    host_comparison,
    hypothesis_tests,
    iteration_telemetry,
    limit_partner,
    read_samples,
    runtime_ratios,
    summarize,
    variance,
)
from interference.studies.pairs.statistics import interference_ratios as _interference_ratios
from interference.studies.pairs.statistics.fidelity import fidelity  # noqa: F401
from interference.studies.pairs.statistics.placement_questions import (  # noqa: F401
    case_contrasts,
    worst_placements,
)
from interference.studies.pairs.statistics.published import comparison as published  # noqa: F401


def _study_samples(inputs, with_unlimited: bool = False):
    """The study proper: without the baselines re-measured at the end (drift.py's), and without
    Case 1u unless the table uses it (the papers' tables know only their cases)."""
    samples = drift.without_end(read_samples(inputs["samples"]))
    return samples if with_unlimited else samples[samples["case"] != cases.UNLIMITED]


def variance_components(inputs, jobs):
    # runs.tsv is there in the workflow (the job waits for it); run by hand without it, a run is
    # priced by the duration model.
    path = inputs.get("runs")
    runs = (
        pd.read_csv(path, sep="\t", dtype={"case": str, "pair": str})
        if path and Path(path).exists()
        else None
    )
    return variance.variance_components(_study_samples(inputs, with_unlimited=True), runs)


def summary(inputs, jobs):
    return summarize(_study_samples(inputs, with_unlimited=True))


def interference(inputs, jobs):
    # Case 1u enters only as the limit's effect of the paired IRs (paired.py): not a row.
    out = _interference_ratios(_study_samples(inputs, with_unlimited=True), jobs=jobs)
    return out[out["case"] != cases.UNLIMITED].reset_index(drop=True)


def anova(inputs, jobs):
    return hypothesis_tests.anova(_study_samples(inputs))


def posthoc(inputs, jobs):
    return hypothesis_tests.posthoc(_study_samples(inputs), jobs)


def runtimes(inputs, jobs):
    return runtime_ratios.runtime_ratios(_study_samples(inputs))


def hosts(inputs, jobs):
    return host_comparison.host_ratios(_study_samples(inputs))


def host_anova(inputs, jobs):
    return host_comparison.host_anova(_study_samples(inputs))


def contention(inputs, jobs):
    return iteration_telemetry.contention(_study_samples(inputs, with_unlimited=True))


def pressure_correlation(inputs, jobs):
    return iteration_telemetry.pressure_correlation(read_samples(inputs["contention"]))


def contention_by_case(inputs, jobs):
    return iteration_telemetry.by_case(read_samples(inputs["contention"]))


def split(inputs, jobs):
    return limit_partner.split(_study_samples(inputs, with_unlimited=True), jobs=jobs)


def drift_table(inputs, jobs):
    return drift.drift(read_samples(inputs["samples"]), jobs)
