"""Numbers and words as the paper prints them: U+2212 minus, thin-space thousands, "–" for none."""

from __future__ import annotations

import html
import math
from datetime import UTC, datetime

import pandas as pd

MINUS = "\u2212"
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def is_num(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not pd.isna(x)


def num(x, digits: int | None = None) -> str:
    """1 decimal from 100 up, 2 from 10, 3 from 1, 3 significant digits below."""
    if not is_num(x):
        return "–"
    x = float(x)
    if digits is not None:
        s = f"{x:,.{digits}f}"
    else:
        ax = abs(x)
        if ax >= 100:
            s = f"{x:,.1f}"
        elif ax >= 10:
            s = f"{x:,.2f}"
        elif ax >= 1:
            s = f"{x:,.3f}"
        elif ax == 0:
            s = "0"
        else:
            s = f"{x:.3g}"
    return s.replace(",", "\u2009").replace("-", MINUS)


def numi(x) -> str:
    """A whole number without decimals (a count or a setting), else as num()."""
    return num(x, 0) if is_num(x) and float(x).is_integer() else num(x)


def recorded(values, unit: str = "") -> str:
    """Numbers as the runs recorded them: '12', or '10–15' where they differ; '' when none was
    recorded (a sentence then says so rather than falling back on the config)."""
    v = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna()
    if v.empty:
        return ""
    lo, hi = numi(v.min()), numi(v.max())
    return (lo if lo == hi else f"{lo}–{hi}") + unit


def sci(x) -> str:
    """Large magnitudes as 3.868 × 10¹⁰ (sums of squares); others as num()."""
    if not is_num(x) or abs(float(x)) < 1e6:
        return num(x)
    exp = math.floor(math.log10(abs(float(x))))
    mant = float(x) / 10**exp
    return f"{mant:.3f} × 10{str(exp).translate(SUPERSCRIPT)}".replace("-", MINUS, 1)


def pct(x, digits: int = 1, sign: bool = True) -> str:
    if not is_num(x):
        return "–"
    s = f"{100 * float(x):+.{digits}f} %" if sign else f"{100 * float(x):.{digits}f} %"
    return s.replace("-", MINUS)


def signed(x, digits: int = 3) -> str:
    """A ratio with its sign always shown: +0.242, −0.210."""
    return "–" if not is_num(x) else f"{float(x):+.{digits}f}".replace("-", MINUS)


def p_str(p) -> str:
    if not is_num(p):
        return "–"
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def esc(x) -> str:
    return html.escape(str(x))


def utc(ts) -> str:
    if not is_num(ts):
        return "–"
    return datetime.fromtimestamp(float(ts), tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(seconds) -> str:
    if not is_num(seconds):
        return "–"
    s = float(seconds)
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def bytes_h(n) -> str:
    if not is_num(n):
        return "–"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
    return str(n)


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def cap(text: str) -> str:
    """First letter upper case, the rest untouched (str.capitalize lowercases the rest)."""
    return text[:1].upper() + text[1:]


def and_list(items) -> str:
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def interval_level(table: pd.DataFrame) -> str:
    """What a ratio table's 95 % intervals cover, from its ci_level column (stats/run_level.py):
    "over runs", "from a bootstrap over one run's iterations (no verdict rests on them)", both, or
    "from a bootstrap" for a table made before the column."""
    levels = set(table["ci_level"].fillna("").astype(str)) - {""} if "ci_level" in table else set()
    words = {
        "runs": "over runs",
        "iterations": "from a bootstrap over one run's iterations (no verdict rests on them)",
    }
    said = [words[k] for k in ("runs", "iterations") if k in levels]
    return " or ".join(said) if said else "from a bootstrap"
