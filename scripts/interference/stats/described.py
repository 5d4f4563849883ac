"""The columns of the descriptive statistics (descriptive.describe) that every study's summary
table ends with, declared once. Light: the studies' table declarations, which planning imports,
build their summaries' schemas from it."""

from __future__ import annotations

from interference.core.table_schema import FLAG, INTEGER, NUMBER, TEXT, TableSchema

DESCRIBED = TableSchema(
    n=INTEGER,
    mean=NUMBER,
    median=NUMBER,
    trimmed_mean=NUMBER,
    min=NUMBER,
    max=NUMBER,
    sd=NUMBER,
    cv=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    ci_method=TEXT,
    unit=TEXT,
    higher_is_better=FLAG,
    n_excluded_overlap=INTEGER,
    n_excluded_failed=INTEGER,
    n_excluded_steal=INTEGER,
    note=TEXT,
)
