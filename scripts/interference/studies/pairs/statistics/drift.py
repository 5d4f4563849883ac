"""The machine's drift over a study (config drift_check): each Case 1 baseline measured once
more after every other run of its runtime (case "1-end") against its first measurement.

The change is the interference ratio's statistic with the first measurement as the baseline:
(end - first)/first, sign-oriented so that negative means worse at the end, with its 95 %
bootstrap CI. A CI that excludes 0 says the machine (or anything else that changed over the
study) moved the baseline by about that much: every IR of that target carries that doubt."""

from __future__ import annotations

import pandas as pd

from interference.studies.pairs import schemas, statistics
from interference.studies.pairs.cases import END

COLUMNS = schemas.DRIFT.columns  # declared with their kinds in ../schemas.py


def without_end(samples: pd.DataFrame) -> pd.DataFrame:
    """The study proper: every sample but the re-measured baselines'."""
    return samples[samples["case"] != END]


def drift(samples: pd.DataFrame, jobs: int = 1) -> pd.DataFrame:
    """One row per host, runtime, target and metric with a baseline measured at the end."""
    both = samples[samples["case"].isin(["1", END])]
    if not (both["case"] == END).any():
        return pd.DataFrame(columns=COLUMNS)
    ratios = statistics.interference_ratios(both, jobs=jobs)
    out = ratios.rename(
        columns={
            "mean": "end_mean",
            "baseline_mean": "first_mean",
            "n": "end_n",
            "baseline_n": "first_n",
            "ir": "change",
            "ir_ci_low": "change_ci_low",
            "ir_ci_high": "change_ci_high",
            "ir_ci_method": "ci_method",
        }
    )
    # How far apart the two measurements are (mid-times of each's iterations), and how much CPU
    # time the hypervisor gave to others meanwhile (telemetry: steal, in CPUs' worth).
    both = both.assign(
        mid=(both["start"] + both["end"]) / 2,
        steal=pd.to_numeric(both["steal_cores"], errors="coerce") if "steal_cores" in both else float("nan"),
    )
    per_case = both.groupby(["host", "runtime", "target", "case"])[["mid", "steal"]].mean()
    keys = list(out[["host", "runtime", "target"]].itertuples(index=False, name=None))

    def at(k, case, column):
        return per_case[column].get((*k, case), float("nan"))

    out["hours_between"] = [(at(k, END, "mid") - at(k, "1", "mid")) / 3600 for k in keys]
    out["first_steal_cores"] = [at(k, "1", "steal") for k in keys]
    out["end_steal_cores"] = [at(k, END, "steal") for k in keys]
    return out[COLUMNS].reset_index(drop=True)
