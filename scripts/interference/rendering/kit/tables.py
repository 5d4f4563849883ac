"""HTML tables with pandas Styler: the papers' layout (a grouped first column, right-aligned
numbers), a numbered caption, shaded cells and a note under the table.

Cells are text (escaped here) or ("html", markup) for cells that carry their own markup."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from interference.rendering.kit.format import esc, is_num, num


def _cell(v) -> str:
    if isinstance(v, tuple) and v and v[0] == "html":
        return v[1]
    return esc(v)


def table_html(
    columns: list[str],
    rows: list[list],
    caption: str = "",
    number: int | None = None,
    group_first: bool = False,
    numeric_from: int = 1,
    cell_class: Callable[[int, int], str] | None = None,
    table_class: str = "rpt-table",
    notes: str = "",
    text_cols: tuple = (),
) -> str:
    """columns: header texts; rows: lists of cells; group_first: runs of equal first cells become
    one row heading (the papers' Case column); columns from numeric_from on are numbers (right
    aligned) except text_cols; cell_class(i, j) adds a CSS class to a cell. The caption is HTML."""

    def kind(j):
        return "text" if j in text_cols else ("num" if j >= numeric_from else "key")

    first = 1 if group_first else 0
    cells = [[_cell(v) for v in r] for r in rows]
    data = pd.DataFrame([r[first:] for r in cells], columns=range(first, len(columns)), dtype=object)
    starts = set()  # rows that open a group (a rule above them)
    if group_first:
        keys = [r[0] for r in rows]
        starts = {i for i in range(1, len(keys)) if keys[i] != keys[i - 1]}
        data.index = pd.MultiIndex.from_arrays([[r[0] for r in cells], range(len(rows))])
        data.columns.name = _cell(columns[0])

    def classes(i, j):
        extra = cell_class(i, j) if cell_class else ""
        return " ".join(c for c in (kind(j), extra, "group-start" if i in starts else "") if c)

    styler = (
        data.style.set_td_classes(
            pd.DataFrame(
                [[classes(i, j) for j in data.columns] for i in range(len(rows))],
                index=data.index,
                columns=data.columns,
            )
        )
        .relabel_index([_cell(c) for c in columns[first:]], axis="columns")
        .set_table_attributes(f'class="{table_class}" data-quarto-disable-processing="true"')
        # Header alignment follows the column's cells (numbers right, text left).
        .set_table_styles(
            [
                {"selector": f"th.col{k}", "props": "text-align: right"}
                for k, j in enumerate(data.columns)
                if kind(j) == "num"
            ]
        )
    )
    styler = styler.hide(level=1, axis="index") if group_first else styler.hide(axis="index")
    if caption or number:
        label = f"<b>Table {number}.</b> " if number else ""
        styler = styler.set_caption(f"{label}{caption}")
    html = styler.to_html(table_uuid=f"table{number or 0}", cell_ids=False, sparse_index=True)
    note = f'<p class="rpt-table-note">{notes}</p>' if notes else ""
    return f'<div class="rpt-table-wrap">{html}{note}</div>'


def frame_html(df: pd.DataFrame, caption: str, number: int | None = None) -> str:
    """A whole data frame as a table: numbers formatted as the paper prints them."""
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df]
    rows = [[num(v) if numeric[j] and is_num(v) else ("" if pd.isna(v) else v) for j, v in enumerate(r)]
            for r in df.itertuples(index=False)]  # fmt: skip
    text = tuple(j for j, n in enumerate(numeric) if not n)
    return table_html(list(df.columns), rows, caption, number, numeric_from=0, text_cols=text,
                      table_class="rpt-table rpt-small")  # fmt: skip
