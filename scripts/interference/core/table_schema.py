"""The columns of a table a step writes, declared once: each column's name, in order, and its
kind. The statistics step validates every table against its declaration before writing it
(pandera), and readers take the column names and the number columns from it.

Kinds, not numpy dtypes: a table's dtypes depend on how it was built (an empty table is all
`object`, an integer column with a missing value is float or object, a flag column with a
missing value is object), while what it means to the reader does not. A kind checks the
values that are there; a missing value passes every kind (a statistic that cannot be computed
is left empty, and its row says why).

Light on purpose: planning imports the studies' declarations, so pandas and pandera are
imported only when a table is validated."""

from __future__ import annotations

TEXT = "text"
NUMBER = "number"  # int or float (not a flag)
INTEGER = "integer"  # a whole number (a float column of whole numbers passes: a count with a gap)
FLAG = "flag"  # True or False
KINDS = (TEXT, NUMBER, INTEGER, FLAG)
MEANING = {TEXT: "text", NUMBER: "numbers", INTEGER: "whole numbers", FLAG: "True or False"}


class TableSchemaError(ValueError):
    """A table does not match its declaration; the message names the table and the columns."""


class TableSchema:
    """Ordered columns and their kinds: TableSchema(host=TEXT, n=INTEGER), or parts joined
    (TableSchema(GROUP, DESCRIBED, reason=TEXT)), in the order given."""

    def __init__(self, *parts: TableSchema, **columns: str):
        kinds: dict[str, str] = {}
        for name, kind in [*(item for part in parts for item in part.kinds.items()), *columns.items()]:
            if kind not in KINDS:
                raise ValueError(f"column {name!r} has the unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
            if name in kinds:
                raise ValueError(f"column {name!r} is declared twice")
            kinds[name] = kind
        self.kinds = kinds

    @property
    def columns(self) -> list[str]:
        return list(self.kinds)

    @property
    def numeric(self) -> list[str]:
        """The number columns, for readers that parse them as numbers."""
        return [c for c, k in self.kinds.items() if k in (NUMBER, INTEGER)]

    def of(self, *kinds: str) -> list[str]:
        return [c for c, k in self.kinds.items() if k in kinds]

    @classmethod
    def of_record(cls, record: type) -> TableSchema:
        """The columns of a dataclass's rows: its fields in order, each kind from its type
        (str, float, int, bool; `X | None` is X, its missing value passes anyway)."""
        import dataclasses
        import types
        import typing

        hints = typing.get_type_hints(record)
        by_type = {str: TEXT, float: NUMBER, int: INTEGER, bool: FLAG}
        kinds = {}
        for f in dataclasses.fields(record):
            t = hints[f.name]
            if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union:
                t = next(a for a in typing.get_args(t) if a is not type(None))
            kinds[f.name] = by_type[t]
        return cls(**kinds)

    def __repr__(self) -> str:
        return f"TableSchema({', '.join(f'{c}={k}' for c, k in self.kinds.items())})"

    def validate(self, df, table: str, exact: bool = True) -> None:
        """Raise TableSchemaError naming `table` and every offending column, or return None.
        exact: these columns and no others, in this order; else these among others, anywhere
        (a table whose other columns vary, e.g. samples.tsv's identity columns). Only checks:
        the table is neither coerced nor reordered (what is written is the caller's frame,
        byte for byte)."""
        import pandera.errors

        try:
            _pandera(self, exact).validate(df, lazy=True)
        except pandera.errors.SchemaErrors as e:
            raise TableSchemaError(f"table {table}: " + "; ".join(_problems(e.failure_cases, self))) from None


def _pandera(schema: TableSchema, exact: bool):
    import pandera.pandas as pa

    columns = {
        name: pa.Column(checks=pa.Check(_CHECKS[kind], name=kind), nullable=True, required=True)
        for name, kind in schema.kinds.items()
    }
    # strict: no undeclared column; ordered: the declared order (a reader may rely on it).
    return pa.DataFrameSchema(columns, strict=exact, ordered=exact, coerce=False)


def _problems(failures, schema: TableSchema) -> list[str]:
    """One sentence per offending column, from pandera's failure cases."""
    out: list[str] = []
    for check, group in failures.groupby("check", sort=False, dropna=False):
        cases = [str(c) for c in group["failure_case"]]
        if check == "column_in_dataframe":
            out += [f"column {c!r} is missing" for c in cases]
        elif check == "column_in_schema":
            out += [f"column {c!r} is not declared" for c in cases]
        elif check == "column_ordered":
            out.append(
                f"columns {', '.join(map(repr, cases))} are out of the declared order ({', '.join(schema.columns)})"
            )
        else:
            for column, rows in group.groupby("column", sort=False):
                first = rows.iloc[0]
                out.append(
                    f"column {column!r} must hold {MEANING.get(str(check), check)}, but has "
                    f"{first['failure_case']!r} (row {first['index']})"
                    + (f" and {len(rows) - 1} more" if len(rows) > 1 else "")
                )
    return out


def _values_are(series, test) -> object:
    """Element-wise test of an object column's values (pandera drops the missing ones)."""
    return series.map(test)


def _text(s):
    import pandas as pd

    if pd.api.types.is_string_dtype(s.dtype) and not pd.api.types.is_object_dtype(s.dtype):
        return True
    return _values_are(s, lambda v: isinstance(v, str))


def _is_number(v) -> bool:
    import numbers

    return isinstance(v, numbers.Real) and not isinstance(v, bool) and type(v).__name__ != "bool_"


def _number(s):
    import pandas as pd

    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        return True
    return _values_are(s, _is_number)


def _integer(s):
    import pandas as pd

    if pd.api.types.is_integer_dtype(s.dtype):
        return True
    return _values_are(s, lambda v: _is_number(v) and float(v).is_integer())


def _flag(s):
    import pandas as pd

    if pd.api.types.is_bool_dtype(s.dtype):
        return True
    return _values_are(s, lambda v: isinstance(v, bool) or type(v).__name__ == "bool_")


_CHECKS = {TEXT: _text, NUMBER: _number, INTEGER: _integer, FLAG: _flag}


# Which run a row of the run-facts tables is (runs.tsv's first columns); the key that joins a
# run's members (run_members.tsv) to its row of runs.tsv.
RUN_IDENTITY = TableSchema(host=TEXT, runtime=TEXT, study=TEXT, key=TEXT, repetition=INTEGER, run_id=TEXT)
# One row per member of a run (run_members.tsv), whatever the study: which member (1, 2, ...),
# its role as the run record names it, and its microservice. A study whose runs have members
# adds its facts about each after these (Study.member_schema); the others write no rows.
RUN_MEMBER = TableSchema(RUN_IDENTITY, member=INTEGER, role=TEXT, microservice=TEXT)
