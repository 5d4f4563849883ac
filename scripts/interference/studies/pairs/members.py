"""The members of the pair study's runs as the report and the findings read them: the rows of
run_members.tsv (schemas.RUN_MEMBERS), each beside its run's columns from runs.tsv (its case and
pair), joined on the run's identity (core's RUN_IDENTITY)."""

from __future__ import annotations

import pandas as pd

from interference.core.table_schema import RUN_IDENTITY

# The columns of runs.tsv a reader of the members asks for most: what the member ran in.
RUN_COLUMNS = ("case", "pair", "after_all")


def beside_runs(members: pd.DataFrame, runs: pd.DataFrame, columns=RUN_COLUMNS) -> pd.DataFrame:
    """The members of the runs in `runs`, in their order, each with its run's `columns` (an empty
    text where runs.tsv has no such column): a member whose run is not there is left out, so that
    both tables tell of the same runs. Both frames as read (ids as text, or the same numbers)."""
    key = [c for c in RUN_IDENTITY.columns if c in members and c in runs]
    added = [c for c in columns if c not in members]
    if not key:  # no runs, or no members
        return members.iloc[:0].assign(**dict.fromkeys(added, ""))
    present = [c for c in added if c in runs]
    out = members.merge(runs[key + present], on=key, how="inner", validate="many_to_one")
    return out.assign(**{c: "" for c in added if c not in present})
