"""Everything report/paper.qmd shows, computed from generated files only.

Inputs (a stats folder and, optionally, the published tables):
  summary.tsv, interference.tsv, anova.tsv, posthoc.tsv   (interference.statistics)
  runs.tsv, environment.json                              (interference.run_info)
  report/published/means.tsv, interference_ratios.tsv     (the papers' values)

Each section is a list of blocks (Markdown text, an HTML table, or a figure with its caption);
`emit` displays them in a notebook. Tables and figures are numbered in the order emitted. No
number of the report is typed in: the only constants here are the thresholds of the verdicts
(CV_FLAG, NEGLIGIBLE_IR, SIMILAR_FACTOR, ALPHA, the eta-squared bands), and the report states them."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from interference.studies.pairs.cases import CASES
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.statistics import NUMERIC_COLUMNS

CASE_NAME = {c: f"Case {c}" for c in CASES}
CASE_PLACEMENT = {
    "1": "one microservice alone in one container, with cgroup limits (the baseline)",
    "2": "both microservices in one container, no limits (intra-container)",
    "3a": "two containers side by side, no limits (inter-container)",
    "3b": "two containers side by side, each limited as in Case 1 (inter-container)",
}
# Dark2: distinguishable for the common colour-vision deficiencies, and in greyscale print.
CASE_COLOR = {"1": "#6b6b6b", "2": "#d95f02", "3a": "#1b9e77", "3b": "#7570b3"}
RESOURCE_ORDER = ("cpu", "memory", "disk", "network", "cpu+memory")
RESOURCE_TITLE = {
    "cpu": "CPU",
    "memory": "Memory",
    "disk": "Disk I/O",
    "network": "Network",
    "cpu+memory": "CPU + memory",
}

# Verdict thresholds (stated in the report wherever they are used).
CV_FLAG = 0.10  # a coefficient of variation above this is flagged
ALPHA = 0.05  # significance level of the tests' verdicts
NEGLIGIBLE_IR = 0.02  # |IR| below this counts as "no interference" when comparing directions
SIMILAR_FACTOR = 2.0  # same sign and within this factor of the paper's |IR|: similar magnitude
ETA_BANDS = ((0.14, "large"), (0.06, "medium"), (0.01, "small"), (0.0, "negligible"))  # Cohen

STATS_FILES = ("summary", "interference", "anova", "posthoc")
NUMERIC = {
    **NUMERIC_COLUMNS,  # the statistics outputs, as interference.statistics declares them
    "runs": [
        "repetition",
        "started",
        "finished",
        "duration_s",
        "iterations_requested",
        "window_s",
        "n_iterations",
        "n_failed",
        "n_in_overlap",
        "overlap_start",
        "overlap_end",
        "overlap_s",
        "loadavg_1m_before",
        "member1_iterations",
        "member1_failed",
        "member2_iterations",
        "member2_failed",
    ],
    "means": ["mean", "median", "trimmed_mean", "max", "min", "sd", "cv"],
    "interference_ratios": ["ir"],
}
BOOL = ("higher_is_better", "reject")

# Units the comparison converts between (value in unit x factor = value in the family's base).
UNIT_FACTORS = {
    "GFLOPS": 1e9,
    "MFLOPS": 1e6,
    "FLOPS": 1.0,
    "GiB/s": 1024**3,
    "MiB/s": 1024**2,
    "KiB/s": 1024.0,
    "GB/s": 1e9,
    "GB/sec": 1e9,
    "MB/s": 1e6,
    "MB/sec": 1e6,
    "KB/s": 1e3,
    "kB/s": 1e3,
    "K/sec": 1e3,
    "B/s": 1.0,
    "Gbit/s": 1e9 / 8,
    "Gbps": 1e9 / 8,
    "Mbit/s": 1e6 / 8,
    "Mbps": 1e6 / 8,
    "Kbit/s": 1e3 / 8,
    "s": 1.0,
    "ms": 1e-3,
}
UNIT_FAMILY = {
    **{u: "flops" for u in ("GFLOPS", "MFLOPS", "FLOPS")},
    **{
        u: "bytes"
        for u in (
            "GiB/s",
            "MiB/s",
            "KiB/s",
            "GB/s",
            "GB/sec",
            "MB/s",
            "MB/sec",
            "KB/s",
            "kB/s",
            "K/sec",
            "B/s",
            "Gbit/s",
            "Gbps",
            "Mbit/s",
            "Mbps",
            "Kbit/s",
        )
    },
    "s": "time",
    "ms": "time",
}


# ---------------------------------------------------------------------------------------------
# Reading


def read_table(path: Path, kind: str) -> pd.DataFrame:
    """A generated TSV: ids stay strings ('' for none), numbers numeric, flags boolean."""
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for c in NUMERIC.get(kind, []):
        if c in df:
            df[c] = pd.to_numeric(df[c].replace("", np.nan), errors="coerce")
    for c in BOOL:
        if c in df:
            df[c] = df[c].str.strip().str.lower().isin(["true", "1", "yes"])
    for c in ("case",):
        if c in df:
            df[c] = df[c].str.strip()
    return df


def is_num(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not pd.isna(x)


# ---------------------------------------------------------------------------------------------
# Formatting


def num(x, digits: int | None = None) -> str:
    """A number as the papers print it: 1 decimal from 100 up, thin-space thousands, U+2212 minus."""
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
    return s.replace(",", "\u2009").replace("-", "\u2212")


def numi(x) -> str:
    """A whole number without decimals (a count or a setting), else as num()."""
    return num(x, 0) if is_num(x) and float(x).is_integer() else num(x)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x) -> str:
    """Large magnitudes as 3.868 × 10¹⁰ (sums of squares); others as num()."""
    if not is_num(x) or abs(float(x)) < 1e6:
        return num(x)
    exp = math.floor(math.log10(abs(float(x))))
    mant = float(x) / 10**exp
    return f"{mant:.3f} × 10{str(exp).translate(SUPERSCRIPT)}".replace("-", "\u2212", 1)


def pct(x, digits: int = 1, sign: bool = True) -> str:
    if not is_num(x):
        return "–"
    s = f"{100 * float(x):+.{digits}f} %" if sign else f"{100 * float(x):.{digits}f} %"
    return s.replace("-", "\u2212")


def mark_missing(ax, xs, values) -> None:
    """Write "no data" where a bar has no value, so that it is not read as a zero."""
    for x, v in zip(xs, values):
        if not np.isfinite(v):
            ax.text(x, 0, "no data", rotation=90, ha="center", va="bottom", fontsize=7, color="#777777")


def ir_str(x) -> str:
    return "–" if not is_num(x) else f"{float(x):+.3f}".replace("-", "\u2212")


def p_str(p) -> str:
    if not is_num(p):
        return "–"
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def eta_band(eta) -> str:
    for bound, name in ETA_BANDS:
        if is_num(eta) and eta >= bound:
            return name
    return "–"


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


# ---------------------------------------------------------------------------------------------
# Blocks


@dataclass
class Block:
    kind: str  # "md" | "html" | "fig"
    content: object
    caption: str = ""
    alt: str = ""
    extra: dict = field(default_factory=dict)


def md(text: str) -> Block:
    return Block("md", text)


def raw_html(text: str) -> Block:
    return Block("html", text)


def figure_html(fig: Figure, number: int, caption: str, alt: str, width_px: int | None = None) -> str:
    """A self-contained <figure>: the PNG inline (no external request), its alt text and caption."""
    buf = io.BytesIO()
    dpi = 160
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    data = base64.b64encode(buf.getvalue()).decode()
    w_in = fig.get_size_inches()[0]
    width = width_px or round(w_in * 96)
    return (
        f'<figure class="rpt-figure" id="figure-{number}">'
        f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}" style="width:min(100%, {width}px)">'
        f"<figcaption><b>Figure {number}.</b> {caption}</figcaption></figure>"
    )


def html_table(
    columns: list[str],
    rows: list[list],
    caption: str = "",
    number: int | None = None,
    group_first: bool = False,
    numeric_from: int = 1,
    cell_class=None,
    table_class: str = "rpt-table",
    notes: str = "",
    text_cols: tuple = (),
) -> str:
    """An HTML table; group_first merges runs of equal first cells (the papers' Case column).

    Cells are escaped text unless given as ("html", markup). cell_class(i, j) -> css class."""

    def cell(v):
        if isinstance(v, tuple) and v and v[0] == "html":
            return v[1]
        return esc(v)

    # data-quarto-disable-processing: Quarto keeps the table as written (rowspans, classes).
    def kind(j):
        return "text" if j in text_cols else ("num" if j >= numeric_from else "key")

    out = [f'<div class="rpt-table-wrap"><table class="{table_class}" data-quarto-disable-processing="true">']
    if caption or number:
        label = f"<b>Table {number}.</b> " if number else ""
        out.append(f"<caption>{label}{caption}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f'<th class="{kind(j)}">{cell(c)}</th>' for j, c in enumerate(columns))
        + "</tr></thead><tbody>"
    )
    spans = {}
    if group_first:
        i = 0
        while i < len(rows):
            j = i
            while j + 1 < len(rows) and rows[j + 1][0] == rows[i][0]:
                j += 1
            spans[i] = j - i + 1
            for k in range(i + 1, j + 1):
                spans[k] = 0
            i = j + 1
    for i, r in enumerate(rows):
        tr_class = ' class="group-start"' if group_first and spans.get(i, 1) > 0 and i > 0 else ""
        tds = []
        for j, v in enumerate(r):
            if group_first and j == 0:
                if spans[i] == 0:
                    continue
                tds.append(f'<th scope="rowgroup" rowspan="{spans[i]}" class="key">{cell(v)}</th>')
                continue
            cls = [kind(j)]
            if cell_class:
                extra = cell_class(i, j)
                if extra:
                    cls.append(extra)
            tds.append(f'<td class="{" ".join(cls)}">{cell(v)}</td>')
        out.append(f"<tr{tr_class}>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    if notes:
        out.append(f'<p class="rpt-table-note">{notes}</p>')
    out.append("</div>")
    return "".join(out)


def emit(blocks) -> None:
    """Display blocks in the running notebook (Quarto or nbclient): Markdown or raw HTML."""
    from IPython.display import HTML, Markdown, display

    for b in blocks:
        if b.kind == "md":
            display(Markdown(b.content))
        else:
            display(HTML(b.content))


# ---------------------------------------------------------------------------------------------
# Figures' common style


def style() -> None:
    matplotlib.rcParams.update(
        {
            "font.family": "DejaVu Sans",
            "font.size": 9.5,
            "axes.titlesize": 10.5,
            "axes.titleweight": "bold",
            "axes.labelsize": 9.5,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.grid.axis": "y",
            "grid.color": "#dddddd",
            "grid.linewidth": 0.6,
            "axes.axisbelow": True,
            "xtick.labelsize": 8.5,
            "ytick.labelsize": 8.5,
            "legend.fontsize": 8.5,
            "legend.frameon": False,
            "figure.facecolor": "white",
        }
    )


# ---------------------------------------------------------------------------------------------
# The report


class Report:
    def __init__(self, stats_dir, published_dir=None, renderer: str = "", generated_at: str | None = None):
        self.stats_dir = Path(stats_dir)
        self.published_dir = Path(published_dir) if published_dir else None
        self.renderer = renderer
        self.generated_at = generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        t = {k: read_table(self.stats_dir / f"{k}.tsv", k) for k in STATS_FILES}
        self.summary, self.ir, self.anova, self.posthoc = (t[k] for k in STATS_FILES)
        runs = self.stats_dir / "runs.tsv"
        self.runs = read_table(runs, "runs") if runs.exists() else pd.DataFrame()
        envp = self.stats_dir / "environment.json"
        self.env = json.loads(envp.read_text()) if envp.exists() else {}
        self.pub_means = self._published("means")
        self.pub_ir = self._published("interference_ratios")
        self.config = self.env.get("config", {})
        self.ms = self.env.get("microservices", {})
        self._tables = 0
        self._figures = 0
        style()

    def _published(self, name) -> pd.DataFrame:
        if not self.published_dir:
            return pd.DataFrame()
        p = self.published_dir / f"{name}.tsv"
        if not p.exists():
            return pd.DataFrame()
        df = read_table(p, name)
        if "partner" in df:
            df["partner"] = df["partner"].replace({"NA": "", "-": ""})
        return df

    # -- numbering ---------------------------------------------------------------------------
    def table(self, columns, rows, caption, **kw) -> Block:
        self._tables += 1
        return raw_html(html_table(columns, rows, caption=caption, number=self._tables, **kw))

    def figure(self, fig: Figure, caption: str, alt: str, width_px: int | None = None) -> Block:
        self._figures += 1
        out = raw_html(figure_html(fig, self._figures, caption, alt, width_px))
        out.extra["figure"] = fig
        return out

    # -- naming ------------------------------------------------------------------------------
    def order(self) -> list[str]:
        """Microservices in config order, then any others in the data alphabetically."""
        seen = list(self.config.get("microservices", []))
        for t in sorted(set(self.summary["target"]) | set(self.summary["partner"]) - {""}):
            if t and t not in seen:
                seen.append(t)
        return seen

    def name(self, ms_id: str) -> str:
        return self.ms.get(ms_id, {}).get("name", ms_id)

    def resource(self, ms_id: str) -> str:
        return str(self.ms.get(ms_id, {}).get("resource", "other")).lower().replace(" ", "")

    @staticmethod
    def label(target: str, partner: str) -> str:
        return f"{target}(+{partner})" if partner else target

    def metric_title(self, target: str, metric: str) -> str:
        return f"{self.name(target)} {metric.replace('_', ' ')}"

    def setups(self) -> list[tuple[str, str]]:
        return list(self.summary[["host", "runtime"]].drop_duplicates().itertuples(index=False, name=None))

    def setup_name(self, host, runtime) -> str:
        return f"{runtime} on {host}"

    def many_setups(self) -> bool:
        return len(self.setups()) > 1

    def targets(self) -> list[str]:
        present = set(self.summary["target"])
        return [m for m in self.order() if m in present]

    def metrics_of(self, target: str) -> list[str]:
        declared = [m["name"] for m in self.ms.get(target, {}).get("metrics", [])]
        present = list(dict.fromkeys(self.summary.loc[self.summary["target"] == target, "metric"]))
        return [m for m in declared if m in present] + [m for m in present if m not in declared]

    def unit_of(self, target: str, metric: str) -> str:
        rows = self.summary[(self.summary["target"] == target) & (self.summary["metric"] == metric)]
        return rows["unit"].iloc[0] if len(rows) else ""

    def higher_is_better(self, target: str, metric: str) -> bool:
        rows = self.summary[(self.summary["target"] == target) & (self.summary["metric"] == metric)]
        return bool(rows["higher_is_better"].iloc[0]) if len(rows) else True

    def resources_present(self) -> list[str]:
        res = []
        for t in self.targets():
            r = self.resource(t)
            if r not in res:
                res.append(r)
        known = [r for r in RESOURCE_ORDER if r in res]
        return known + sorted(r for r in res if r not in RESOURCE_ORDER)

    def sort_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """Rows in the papers' order: case 1, 2, 3a, 3b; partners in config order."""
        order = {m: i for i, m in enumerate(self.order())}
        d = df.copy()
        d["_c"] = d["case"].map({c: i for i, c in enumerate(CASES)}).fillna(9)
        d["_p"] = d["partner"].map(lambda p: -1 if p == "" else order.get(p, 99))
        return d.sort_values(["_c", "_p"]).drop(columns=["_c", "_p"])

    # -- overview ----------------------------------------------------------------------------
    def host_line(self) -> str:
        parts = []
        for host, h in self.env.get("hosts", {}).items():
            cores = h.get("cores")
            parts.append(
                f"{esc(host)} ({esc(h.get('cpu_model', '?'))}, {esc(cores)} cores, "
                f"{bytes_h(h.get('memory_bytes'))} memory, Linux {esc(h.get('kernel', '?'))})"
            )
        return and_list(parts) or "an unrecorded host"

    def engine_line(self) -> str:
        parts = []
        for rt, e in self.env.get("engines", {}).items():
            parts.append(
                f"{esc(e.get('engine', rt))} {esc(e.get('version', '?'))} "
                f"(cgroup v{esc(e.get('cgroup_version', '?'))}, {esc(e.get('cgroup_driver', '?'))} driver, "
                f"{esc(e.get('storage_driver', '?'))} storage)"
            )
        return and_list(parts) or "an unrecorded engine"

    def abstract(self) -> list[Block]:
        s = self.summary
        n_groups = len(s)
        n_samples = int(s["n"].sum())
        n_runs = len(self.runs) if len(self.runs) else self.env.get("n_runs", 0)
        targets = self.targets()
        names = and_list(f"{self.name(t)} ({t})" for t in targets)
        cases = [c for c in CASES if c in set(s["case"])]
        text = (
            f"This report re-runs the container-interference experiments of the papers on "
            f"{self.host_line()}, with {self.engine_line()}. "
            f"{plural(n_runs, 'run')} of {names} in {and_list(CASE_NAME[c] for c in cases)} gave "
            f"{n_samples} samples in {n_groups} case × target × partner × metric groups."
        )
        blocks = [md(text)]
        comp = self.comparison()
        if len(comp):
            agree = int(comp["direction_agrees"].sum())
            blocks.append(
                md(
                    f"Of the papers' {plural(len(comp), 'published interference ratio')} for combinations measured "
                    f"here, **{agree} ({pct(agree / len(comp), 0, sign=False)}) have the same direction on "
                    f"this machine** (see *Comparison with the published results*)."
                )
            )
        else:
            blocks.append(
                md(
                    "No published values were available to compare with (report/published/ is empty), so "
                    "this report shows this machine's results alone."
                )
            )
        worst = self.ir.dropna(subset=["ir"]).sort_values("ir").head(1)
        if len(worst):
            w = worst.iloc[0]
            blocks.append(
                md(
                    f"The strongest interference measured here is {CASE_NAME[w['case']]} "
                    f"{self.label(w['target'], w['partner'])} on {self.metric_title(w['target'], w['metric'])}: "
                    f"IR = {ir_str(w['ir'])} ({pct(w['ir'])} against the baseline)."
                )
            )
        return blocks

    # -- methods -----------------------------------------------------------------------------
    def tool_version(self, ms_id: str) -> str:
        for img in self.env.get("images", []):
            if img.get("image") == ms_id:
                tv = img.get("tool_versions") or {}
                return ", ".join(f"{k} {v}" for k, v in tv.items()) or "–"
        return "–"

    def design_text(self) -> str:
        c = self.config
        ws = c.get("window_s", {})
        cases = [x for x in CASES if x in c.get("cases", CASES)]
        windows = ", ".join(f"{ws[k]} s in Case {k}" for k in CONCURRENT if k in ws and k in cases)
        ms = c.get("microservices", [])
        n_pairs = len(ms) * (len(ms) + 1) // 2
        return (
            f"Cases {and_list(cases)}; {plural(len(ms), 'microservice')} ({', '.join(ms)}) alone in Case 1 "
            f"and in all {plural(n_pairs, 'unordered pair')} (self-pairs included) in Cases 2, 3a and 3b; "
            f"{plural(c.get('iterations', 0), 'iteration')} in Case 1 (a fresh container each); "
            f"windows of {windows or '–'}; {plural(c.get('repetitions', 1), 'repetition')}; an iteration over "
            f"{numi(c.get('iteration_timeout_s'))} s is killed and counted as failed."
        )

    def limits_text(self) -> str:
        lim = self.config.get("limits", {})
        mode = lim.get("cpu_mode", "?")
        cpu = (
            f"{plural(lim.get('cpus', 0), 'core')} pinned with --cpuset-cpus (disjoint cores in Case 3b)"
            if mode == "cpuset"
            else f"{lim.get('cpus')} CPUs of quota (--cpus)"
        )
        return f"{cpu} and {esc(lim.get('memory', '?'))} memory (swap off) per limited container"

    def ceem(self) -> list[Block]:
        """The papers' ten CEEM steps and what each is in this run."""
        present = self.targets()
        metrics = "; ".join(
            f"{self.name(t)}: "
            + ", ".join(
                f"{m} ({self.unit_of(t, m)}, {'higher' if self.higher_is_better(t, m) else 'lower'} is better)"
                for m in self.metrics_of(t)
            )
            for t in present
        )
        tools = "; ".join(f"{self.name(t)}: {self.ms.get(t, {}).get('tool', '?')}" for t in present)
        sizes = "; ".join(
            f"{t}: "
            + ", ".join(
                f"{k} = {numi(v) if isinstance(v, (int, float)) else v}"
                for k, v in self.config.get("sizes", {}).get(t, {}).items()
            )
            for t in self.config.get("microservices", [])
            if self.config.get("sizes", {}).get(t)
        )
        resources = and_list(RESOURCE_TITLE.get(self.resource(t), self.resource(t)) for t in present)
        env = self.env.get("engines", {})
        engines = ", ".join(f"{e.get('engine', r)} {e.get('version', '?')}" for r, e in env.items())
        n_runs = len(self.runs)
        n_iter = int(self.runs["n_iterations"].sum()) if n_runs else 0
        span = ""
        if n_runs:
            span = f" from {utc(self.runs['started'].min())} to {utc(self.runs['finished'].max())}"
        rows = [
            (
                "1 Requirement recognition",
                "How much do microservices interfere when they share one container (intra-container) or one host in separate containers (inter-container), with and without cgroup limits, relative to running alone?",
                "The same question, on this machine: every number below is an interference ratio against this machine's own Case 1 baseline.",
            ),
            (
                "2 Service feature identification",
                "CPU, memory, disk I/O and network of a Docker host.",
                f"The resources of the microservices measured here: {resources}.",
            ),
            (
                "3–4 Metrics and benchmarks",
                "One micro-benchmark per resource, as a microservice in a container image.",
                f"{metrics}. Tools: {tools}.",
            ),
            (
                "5–6 Factors and levels",
                "Placement case (1, 2, 3a, 3b) × co-located microservice; host, limits and workload sizes fixed.",
                f"Placement: {and_list(self.config.get('cases', []))}; partner: {', '.join(self.config.get('microservices', []))}; runtime: {engines or '–'}; limits: {self.limits_text()}; sizes: {sizes}.",
            ),
            (
                "7 Experimental design",
                "A fixed number of iterations alone; fixed-length windows for concurrent cases, averaged over the window.",
                self.design_text(),
            ),
            (
                "8 Implementation",
                "docker run of each microservice image on one host.",
                f"{plural(n_runs, 'run')}, {n_iter} iterations{span}; images, limits read back and host below.",
            ),
            (
                "9 Analysis",
                "Mean, median, trimmed mean (P10–P90), max, min, SD, CV; interference ratio IR.",
                f"The same statistics, plus 95 % confidence intervals ({self.ci_methods()}), two-way ANOVA (case × partner) with partial η², Kruskal–Wallis where residuals are not normal, and Tukey HSD.",
            ),
            (
                "10 Conclusion and reporting",
                "Tables, IR figures and findings.",
                "This document, rendered from results/stats/ by the pipeline; the comparison with the published values is generated.",
            ),
        ]
        return [
            md(
                "The papers follow the Cloud Evaluation Experiment Methodology (CEEM). Each of its steps, "
                "and what it is in this run (generated from the config, the run records and the "
                "microservices' declarations):"
            ),
            self.table(
                ["CEEM step", "In the papers", "In this run"],
                [list(r) for r in rows],
                "The CEEM steps of the papers mapped to this run.",
                numeric_from=99,
                table_class="rpt-table rpt-text",
            ),
        ]

    def ci_methods(self) -> str:
        out = []
        ms = set(self.summary.get("ci_method", pd.Series(dtype=str))) - {""}
        if "t" in ms:
            out.append("Student t for means")
        for m in sorted(set(self.ir.get("ir_ci_method", pd.Series(dtype=str))) - {""}):
            parts = m.split("_")
            if parts[0] == "bootstrap" and len(parts) == 3:
                out.append(
                    f"{parts[1].upper() if parts[1] == 'bca' else parts[1]} bootstrap with {parts[2]} resamples for IR"
                )
            else:
                out.append(m)
        return "; ".join(out) or "–"

    def benchmarks_table(self) -> Block:
        rows = []
        for t in self.order():
            d = self.ms.get(t)
            if not d or not d.get("in_config", t in self.targets()):
                continue
            metrics = ", ".join(
                f"{m['name']} ({m['unit']}, {'↑' if m['higher_is_better'] else '↓'})"
                for m in d.get("metrics", [])
            )
            stand_in = d.get("tool") != d.get("paper_tool")
            reason = d.get("stand_in_reason") or ("no reason declared" if stand_in else "")
            tool = d.get("tool", "?")
            tool_cell = (
                "html",
                f"{esc(tool)}"
                + (
                    f'<br><span class="muted">stand-in for the papers\' tool: {esc(reason)}</span>'
                    if stand_in
                    else ""
                ),
            )
            rows.append(
                [
                    RESOURCE_TITLE.get(self.resource(t), d.get("resource", "")),
                    f"{d.get('name', t)} ({t})",
                    metrics,
                    tool_cell,
                    self.tool_version(t),
                    d.get("paper_tool", "?"),
                ]
            )
        return self.table(
            [
                "Resource",
                "Microservice",
                "Metrics (unit, ↑ higher / ↓ lower is better)",
                "Tool run here",
                "Versions in the image",
                "Tool in the papers",
            ],
            rows,
            "Metrics and benchmarks (the papers' Table 2), from containers/*/microservice.yaml and the image records. "
            "A tool that differs from the papers' is a stand-in, with the declared reason.",
            numeric_from=99,
            table_class="rpt-table rpt-text",
        )

    def environment_blocks(self) -> list[Block]:
        blocks = []
        rows = []
        for host, h in self.env.get("hosts", {}).items():
            rows += [
                ["Host", "name", host],
                ["Host", "CPU model", h.get("cpu_model")],
                ["Host", "cores", h.get("cores")],
                ["Host", "memory", bytes_h(h.get("memory_bytes"))],
                ["Host", "kernel", h.get("kernel")],
                ["Host", "OS", h.get("os")],
            ]
        for rt, e in self.env.get("engines", {}).items():
            rows += [
                [f"Engine ({rt})", "engine", f"{e.get('engine')} {e.get('version')}"],
                [f"Engine ({rt})", "cgroup", f"v{e.get('cgroup_version')} ({e.get('cgroup_driver')} driver)"],
                [f"Engine ({rt})", "storage driver", e.get("storage_driver")],
                [f"Engine ({rt})", "engine host OS", e.get("os")],
            ]
        rows.append(
            [
                "Config",
                "sha256 of the validated config",
                ("html", f"<code>{esc(self.env.get('config_sha256', '–'))}</code>"),
            ]
        )
        for f in self.env.get("config_files", []):
            rows.append(
                ["Config", f"file read: {f['path']}", ("html", f"sha256 <code>{esc(f['sha256'])}</code>")]
            )
        lim = self.config.get("limits", {})
        rows.append(["Config", "limits (Case 1, 3b)", self.limits_text() if lim else "–"])
        rows.append(["Config", "base image", self.config.get("base_image", "–")])
        blocks.append(
            self.table(
                ["", "", "Value"],
                [[a, b, c if isinstance(c, tuple) else ("" if c is None else str(c))] for a, b, c in rows],
                "Host, engine and config of this run (the papers' factors).",
                group_first=True,
                numeric_from=99,
                table_class="rpt-table rpt-text",
            )
        )
        img_rows = []
        for img in self.env.get("images", []):
            tv = ", ".join(f"{k} {v}" for k, v in (img.get("tool_versions") or {}).items())
            src = (
                img.get("base_image")
                and f"{img.get('base_image')} ({img.get('base_image_source', '?')})"
                or f"on {img.get('built_on', '?')}"
            )
            img_rows.append(
                [
                    img.get("image"),
                    ("html", f"<code>{esc(img.get('ref', ''))}</code>"),
                    ("html", f"<code>{esc(str(img.get('id', ''))[:19])}…</code>"),
                    src,
                    tv or "–",
                ]
            )
        if img_rows:
            blocks.append(
                self.table(
                    ["Image", "Reference", "Image id", "Built from", "Tool versions"],
                    img_rows,
                    "Container images (Case 2 runs a pair image holding both microservices). Ids truncated; full ids in results/stats/environment.json.",
                    numeric_from=99,
                    table_class="rpt-table rpt-text",
                )
            )
        return blocks

    def cases_blocks(self) -> list[Block]:
        """The placement cases (the papers' Figure 2) with the limits requested and read back."""
        rows = []
        r = self.runs
        for c in [c for c in CASES if c in set(self.summary["case"])]:
            req, back, window = "–", "–", "–"
            if len(r):
                x = r[r["case"] == c]
                reqs, backs = set(), set()
                for _, row in x.iterrows():
                    for k in (1, 2):
                        if not row.get(f"member{k}"):
                            continue
                        parts = [
                            f"{key} {row[f'member{k}_requested_{key}']}"
                            for key in ("cpuset", "cpus", "memory")
                            if row.get(f"member{k}_requested_{key}", "") not in ("", None)
                        ]
                        reqs.add(", ".join(parts) or "none")
                        mem = row.get(f"member{k}_read_memory_max", "")
                        try:
                            mem_h = "unlimited" if float(mem) >= 2**62 else bytes_h(float(mem))
                        except (TypeError, ValueError):
                            mem_h = mem or "?"
                        backs.add(f"cpuset {row.get(f'member{k}_read_cpuset', '?')}, memory {mem_h}")
                req = "; ".join(sorted(reqs)) or "–"
                back = "; ".join(sorted(backs)) or "–"
                if c == "1":
                    window = f"{plural(int(x['iterations_requested'].max()), 'iteration')}" if len(x) else "–"
                elif len(x):
                    window = f"{num(x['window_s'].max(), 0)} s"
            rows.append([CASE_NAME[c], CASE_PLACEMENT[c], window, req, back])
        return [
            self.table(
                [
                    "Case",
                    "Placement",
                    "Length",
                    "Limits requested (per container)",
                    "Read back inside the containers",
                ],
                rows,
                "The placement cases of the papers as run here: the limits each container asked for and what "
                "its cgroup said from inside (cpuset, memory.max or memory.limit_in_bytes).",
                numeric_from=99,
                table_class="rpt-table rpt-text",
            )
        ]

    def member_limits(self, row, k) -> str:
        """'L: cpuset 0, memory 2g → cpuset 0, memory 2.0 GiB' (HTML), or '' for no member k."""
        if not row.get(f"member{k}"):
            return ""
        short = {"cpuset": "cpuset", "cpus": "cpus", "memory": "mem"}
        req = [
            f"{short[key]} {row[f'member{k}_requested_{key}']}"
            for key in ("cpuset", "cpus", "memory")
            if row.get(f"member{k}_requested_{key}", "") not in ("", None)
        ]
        mem = row.get(f"member{k}_read_memory_max", "")
        try:
            mem_h = "unlimited" if float(mem) >= 2**62 else bytes_h(float(mem))
        except (TypeError, ValueError):
            mem_h = mem or "?"
        back = f"cpuset {row.get(f'member{k}_read_cpuset', '?')}, mem {mem_h}"
        match = row.get(f"member{k}_limits_match", "")
        flag = "" if match in ("yes", "unlimited") else f' <span class="flag">mismatch: {esc(match)}</span>'
        return f"<b>{esc(row[f'member{k}'])}</b>: {esc(', '.join(req) or 'no limits')} → {esc(back)}{flag}"

    def runs_blocks(self) -> list[Block]:
        if not len(self.runs):
            return [md("No run records (results/stats/runs.tsv) were found.")]
        rows = []
        r = self.runs.copy()
        r["_c"] = r["case"].map({c: i for i, c in enumerate(CASES)})
        r = r.sort_values(["host", "runtime", "_c", "pair", "repetition"])
        multi = self.many_setups()
        reps = self.config.get("repetitions", 1) > 1
        for _, x in r.iterrows():
            if is_num(x.get("window_s")):
                window = f"{num(x['overlap_s'], 1)} of {num(x['window_s'], 0)} s"
            else:
                window = f"{num(x['iterations_requested'], 0)} iterations"
            pair = x["pair"]
            if multi:
                pair += f" ({self.setup_name(x['host'], x['runtime'])})"
            if reps:
                pair += f" rep {int(x['repetition'])}"
            limits = "<br>".join(v for v in (self.member_limits(x, 1), self.member_limits(x, 2)) if v)
            rows.append(
                [
                    CASE_NAME.get(x["case"], x["case"]),
                    pair,
                    utc(x["started"]).replace(" UTC", ""),
                    duration(x["duration_s"]),
                    window,
                    num(x["n_iterations"], 0),
                    num(x["n_in_overlap"], 0),
                    num(x["n_failed"], 0),
                    num(x["loadavg_1m_before"], 2),
                    ("html", limits),
                ]
            )
        return [
            self.table(
                [
                    "Case",
                    "Pair",
                    "Started (UTC)",
                    "Took",
                    "Overlap of window",
                    "Iterations",
                    "In overlap",
                    "Failed",
                    "Load before",
                    "Limits requested → read back in the container",
                ],
                rows,
                "Every run: the overlap (the time both members ran) within its window, iterations, failures, "
                "the 1-minute load average before it, and the cgroup limits each member requested and read back.",
                group_first=True,
                numeric_from=2,
                text_cols=(9,),
                table_class="rpt-table rpt-small rpt-runs",
            )
        ]

    # -- results per resource ----------------------------------------------------------------
    def stats_rows(self, target: str, metric: str, host: str, runtime: str) -> pd.DataFrame:
        s = self.summary
        d = s[
            (s["target"] == target)
            & (s["metric"] == metric)
            & (s["host"] == host)
            & (s["runtime"] == runtime)
        ]
        return self.sort_rows(d)

    def result_table(self, target: str, metric: str, host: str, runtime: str) -> Block:
        d = self.stats_rows(target, metric, host, runtime)
        rows, flags = [], []
        for _, r in d.iterrows():
            rows.append(
                [
                    CASE_NAME.get(r["case"], r["case"]),
                    self.label(r["target"], r["partner"]),
                    num(r["mean"]),
                    num(r["median"]),
                    num(r["trimmed_mean"]),
                    num(r["max"]),
                    num(r["min"]),
                    num(r["sd"]),
                    num(r["cv"], 3),
                    num(r["n"], 0),
                ]
            )
            flags.append(is_num(r["cv"]) and r["cv"] > CV_FLAG)
        unit = self.unit_of(target, metric)
        setup = f", {self.setup_name(host, runtime)}" if self.many_setups() else ""
        n_flag = sum(flags)
        note = (
            f"Shaded CV: above {pct(CV_FLAG, 0, sign=False)} ({plural(n_flag, 'group')}). "
            if n_flag
            else f"No CV above {pct(CV_FLAG, 0, sign=False)}. "
        ) + "Tr. Mean: mean of the values between the 10th and 90th percentile; n: samples counted."
        return self.table(
            ["", "", "Mean", "Median", "Tr. Mean", "Max", "Min", "SD", "CV", "n"],
            rows,
            f"{esc(self.metric_title(target, metric))} result ({esc(unit)}, {'higher' if self.higher_is_better(target, metric) else 'lower'} is better){esc(setup)}.",
            group_first=True,
            numeric_from=2,
            cell_class=lambda i, j: "flag-cell" if j == 8 and flags[i] else "",
            notes=note,
        )

    def _positions(self, d: pd.DataFrame, include_baseline: bool):
        """x positions of bars in case blocks, with a gap between blocks; returns rows, xs, block spans."""
        xs, blocks, x = [], [], 0.0
        cases = [c for c in CASES if (include_baseline or c != "1") and c in set(d["case"])]
        rows = []
        for c in cases:
            part = d[d["case"] == c]
            start = x
            for _, r in part.iterrows():
                rows.append(r)
                xs.append(x)
                x += 1
            blocks.append((c, start, x - 1))
            x += 0.7
        return rows, np.array(xs), blocks

    @staticmethod
    def _case_axis(ax, xs, blocks, labels):
        """Bar labels, and the case names under each block (a secondary axis, so the layout
        engine makes room for them)."""
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, fontsize=8.5 if len(labels) <= 12 else 7)
        if len(xs):
            ax.set_xlim(xs.min() - 0.7, xs.max() + 0.7)
        sec = ax.secondary_xaxis("bottom")
        sec.set_xticks([(a + b) / 2 for _, a, b in blocks])
        sec.set_xticklabels([CASE_NAME[c] for c, _, _ in blocks])
        sec.tick_params(axis="x", length=0, pad=17)
        sec.spines["bottom"].set_visible(False)
        for lab, (c, _, _) in zip(sec.get_xticklabels(), blocks):
            lab.set_color(CASE_COLOR[c])
            lab.set_fontweight("bold")
        for c, a, b in blocks[1:]:
            ax.axvline(a - 0.85, color="#e4e4e4", linewidth=0.8, zorder=0)

    @staticmethod
    def _grid(n: int, n_bars: int, panel_h: float):
        """(figure, axes) for n panels of n_bars bars: one row when it fits, else two columns."""
        per_bar = 0.36
        if n == 1:
            ncols = 1
        elif n * (n_bars * per_bar + 1.2) <= 11.5:
            ncols = n
        else:
            ncols = 2
        nrows = math.ceil(n / ncols)
        width = min(11.5, max(6.5, ncols * (n_bars * per_bar + 1.4)))
        if n > 1:
            width = 11.5 if ncols == 2 else width
        fig = Figure(figsize=(width, panel_h * nrows + 0.3), layout="constrained")
        fig.get_layout_engine().set(h_pad=0.08, hspace=0.06)
        return fig, fig.subplots(nrows, ncols, squeeze=False).ravel()

    def means_figure(self, target: str, host: str, runtime: str) -> Block | None:
        from matplotlib.ticker import FuncFormatter

        metrics = self.metrics_of(target)
        n = len(metrics)
        if not n:
            return None
        n_bars = len(self.stats_rows(target, metrics[0], host, runtime))
        fig, axes = self._grid(n, n_bars, 3.3)
        thousands = FuncFormatter(lambda v, _: f"{v:,.0f}".replace(",", "\u2009").replace("-", "\u2212"))
        for ax, metric in zip(axes, metrics):
            d = self.stats_rows(target, metric, host, runtime)
            rows, xs, blocks = self._positions(d, include_baseline=True)
            means = np.array([r["mean"] for r in rows], dtype=float)
            lo = np.array([r["ci_low"] for r in rows], dtype=float)
            hi = np.array([r["ci_high"] for r in rows], dtype=float)
            err = np.vstack([np.where(np.isnan(lo), 0, means - lo), np.where(np.isnan(hi), 0, hi - means)])
            colors = [CASE_COLOR.get(r["case"], "#999999") for r in rows]
            ax.bar(xs, np.nan_to_num(means), color=colors, width=0.8, edgecolor="white", linewidth=0.5)
            ax.errorbar(
                xs, np.nan_to_num(means), yerr=err, fmt="none", ecolor="#222222", elinewidth=1, capsize=3
            )
            mark_missing(ax, xs, means)
            base = [r["mean"] for r in rows if r["case"] == "1"]
            if base and is_num(base[0]):
                ax.axhline(base[0], color="#444444", linestyle="--", linewidth=0.9, zorder=3)
            labels = [target if r["case"] == "1" else f"+{r['partner']}" for r in rows]
            self._case_axis(ax, xs, blocks, labels)
            unit = self.unit_of(target, metric)
            ax.set_ylabel(f"{metric.replace('_', ' ')} ({unit})")
            if np.nanmax(np.abs(means)) >= 10000:
                ax.yaxis.set_major_formatter(thousands)
            ax.set_title(self.metric_title(target, metric))
            ax.margins(y=0.08)
        for ax in axes[n:]:
            ax.set_visible(False)
        setup = f" ({self.setup_name(host, runtime)})" if self.many_setups() else ""
        hib = "higher" if self.higher_is_better(target, metrics[0]) else "lower"
        caption = (
            f"Mean performance of {esc(self.name(target))} ({esc(target)}){esc(setup)} per case and partner "
            f"(“+S”: measured beside S; {hib} is better). Error bars: 95 % confidence interval of the mean; "
            f"dashed line: the Case 1 baseline."
        )
        return self.figure(fig, caption, alt=f"Bar chart of {self.name(target)} mean per case and partner")

    def ir_figure(self, target: str, host: str, runtime: str) -> Block | None:
        ir = self.ir[
            (self.ir["target"] == target) & (self.ir["host"] == host) & (self.ir["runtime"] == runtime)
        ]
        if ir.empty:
            return None
        metrics = [m for m in self.metrics_of(target) if m in set(ir["metric"])]
        n = len(metrics)
        n_bars = len(ir[ir["metric"] == metrics[0]])
        fig, axes = self._grid(n, n_bars, 3.0)
        # One y range for all panels of the target, so its metrics compare at a glance.
        vals = ir[["ir", "ir_ci_low", "ir_ci_high"]].to_numpy(dtype=float) * 100
        vals = vals[np.isfinite(vals)]
        span = max(5.0, float(np.abs(vals).max())) if vals.size else 5.0
        ymin = min(0.0, float(vals.min())) if vals.size else -5.0
        ymax = max(0.0, float(vals.max())) if vals.size else 5.0
        ylim = (ymin - 0.08 * span, ymax + 0.08 * span)
        for ax, metric in zip(axes, metrics):
            d = self.sort_rows(ir[ir["metric"] == metric])
            rows, xs, blocks = self._positions(d, include_baseline=False)
            v = np.array([r["ir"] for r in rows], dtype=float) * 100
            lo = np.array([r["ir_ci_low"] for r in rows], dtype=float) * 100
            hi = np.array([r["ir_ci_high"] for r in rows], dtype=float) * 100
            err = np.vstack([np.where(np.isnan(lo), 0, v - lo), np.where(np.isnan(hi), 0, hi - v)])
            colors = [CASE_COLOR.get(r["case"], "#999999") for r in rows]
            ax.bar(xs, np.nan_to_num(v), color=colors, width=0.8, edgecolor="white", linewidth=0.5)
            ax.errorbar(xs, np.nan_to_num(v), yerr=err, fmt="none", ecolor="#222222", elinewidth=1, capsize=3)
            mark_missing(ax, xs, v)
            ax.axhline(0, color="#222222", linewidth=0.8)
            self._case_axis(ax, xs, blocks, [f"+{r['partner']}" for r in rows])
            ax.set_ylabel("IR (% of baseline)")
            ax.set_ylim(*ylim)
            ax.set_title(self.metric_title(target, metric))
        for ax in axes[n:]:
            ax.set_visible(False)
        setup = f" ({self.setup_name(host, runtime)})" if self.many_setups() else ""
        caption = (
            f"Interference ratio of {esc(self.name(target))} ({esc(target)}){esc(setup)} beside each partner, per case, "
            f"in percent of its Case 1 baseline: IR = (μ<sub>i</sub> − μ)/μ, sign reversed when lower is better; "
            f"below zero = degradation. Error bars: 95 % bootstrap interval; “no data”: no valid sample "
            f"(see Data quality)."
        )
        return self.figure(
            fig, caption, alt=f"Bar chart of {self.name(target)} interference ratios per case and partner"
        )

    def ir_sentence(self, target: str, host: str, runtime: str) -> str:
        ir = self.ir[
            (self.ir["target"] == target) & (self.ir["host"] == host) & (self.ir["runtime"] == runtime)
        ]
        ir = ir.dropna(subset=["ir"])
        if ir.empty:
            return ""
        out = []
        metrics = [m for m in self.metrics_of(target) if m in set(ir["metric"])]
        for metric in metrics:
            d = ir[ir["metric"] == metric].sort_values("ir")
            worst, best = d.iloc[0], d.iloc[-1]
            base = d["baseline_mean"].iloc[0]
            unit = d["unit"].iloc[0]
            s = (
                f"**{metric.replace('_', ' ')}** (baseline {num(base)} {unit}): worst "
                f"{CASE_NAME[worst['case']]} {self.label(target, worst['partner'])} at {pct(worst['ir'])}"
            )
            if len(d) > 1:
                s += f", best {CASE_NAME[best['case']]} {self.label(target, best['partner'])} at {pct(best['ir'])}"
            mean_by_case = d.groupby("case")["ir"].mean()
            cases = [c for c in CONCURRENT if c in mean_by_case]
            s += "; mean IR " + ", ".join(f"{CASE_NAME[c]} {pct(mean_by_case[c])}" for c in cases) + "."
            out.append(s)
        return "\n".join(f"- {x}" for x in out)

    def results_blocks(self) -> list[Block]:
        blocks = []
        for res in self.resources_present():
            blocks.append(md(f"### {RESOURCE_TITLE.get(res, res)}"))
            for t in [t for t in self.targets() if self.resource(t) == res]:
                d = self.ms.get(t, {})
                intro = (
                    f"#### {self.name(t)} ({t})\n\n"
                    + f"Tool: {d.get('tool', '?')}"
                    + (f" (the papers: {d.get('paper_tool')})." if d.get("paper_tool") else ".")
                )
                blocks.append(md(intro))
                for host, runtime in self.setups():
                    if self.summary[
                        (self.summary["target"] == t)
                        & (self.summary["host"] == host)
                        & (self.summary["runtime"] == runtime)
                    ].empty:
                        continue
                    if self.many_setups():
                        blocks.append(md(f"##### {self.setup_name(host, runtime)}"))
                    sentence = self.ir_sentence(t, host, runtime)
                    if sentence:
                        blocks.append(
                            md("Interference against the Case 1 baseline (IR in percent):\n\n" + sentence)
                        )
                    for metric in self.metrics_of(t):
                        blocks.append(self.result_table(t, metric, host, runtime))
                    f = self.means_figure(t, host, runtime)
                    if f:
                        blocks.append(f)
                    f = self.ir_figure(t, host, runtime)
                    if f:
                        blocks.append(f)
        return blocks

    # -- heat map ----------------------------------------------------------------------------
    def heatmap_blocks(self) -> list[Block]:
        ir = self.ir.copy()
        if ir.empty:
            return [md("No interference ratios were computed (no concurrent case in the data).")]
        blocks = []
        for host, runtime in self.setups():
            d = ir[(ir["host"] == host) & (ir["runtime"] == runtime)]
            if d.empty:
                continue
            rows = [
                (t, m)
                for t in self.targets()
                for m in self.metrics_of(t)
                if ((d["target"] == t) & (d["metric"] == m)).any()
            ]
            partners = [p for p in self.order() if p in set(d["partner"])]
            cases = [c for c in CONCURRENT if c in set(d["case"])]
            vals = np.full((len(cases), len(rows), len(partners)), np.nan)
            key = {(r["case"], r["target"], r["metric"], r["partner"]): r["ir"] for _, r in d.iterrows()}
            for ci, c in enumerate(cases):
                for ri, (t, m) in enumerate(rows):
                    for pi, p in enumerate(partners):
                        vals[ci, ri, pi] = key.get((c, t, m, p), np.nan) * 100
            vmax = max(5.0, float(np.nanmax(np.abs(vals))) if np.isfinite(vals).any() else 5.0)
            norm = TwoSlopeNorm(vcenter=0, vmin=-vmax, vmax=vmax)
            cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#eeeeee")
            cell_w = 0.62 if len(partners) > 3 else 0.75
            w = len(cases) * (len(partners) * cell_w + 0.6) + 2.6
            h = len(rows) * 0.36 + 1.5
            fig = Figure(figsize=(min(max(w, 7.5), 12), max(h, 2.8)), layout="constrained")
            axes = fig.subplots(1, len(cases), squeeze=False, sharey=True).ravel()
            im = None
            for ax, ci, c in zip(axes, range(len(cases)), cases):
                im = ax.imshow(vals[ci], cmap=cmap, norm=norm, aspect="auto")
                ax.set_xticks(range(len(partners)))
                ax.set_xticklabels([f"+{p}" for p in partners])
                ax.set_yticks(range(len(rows)))
                ax.set_yticklabels([f"{t} {m.replace('_', ' ')}" for t, m in rows])
                ax.set_title(CASE_NAME[c], color=CASE_COLOR[c])
                ax.grid(False)
                ax.tick_params(length=0)
                for s in ax.spines.values():
                    s.set_visible(False)
                ax.set_xticks(np.arange(-0.5, len(partners)), minor=True)
                ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
                ax.grid(which="minor", color="white", linewidth=1.5)
                ax.tick_params(which="minor", length=0)
                for ri in range(len(rows)):
                    for pi in range(len(partners)):
                        v = vals[ci, ri, pi]
                        txt = "–" if np.isnan(v) else f"{v:+.0f}".replace("-", "\u2212")
                        dark = not np.isnan(v) and abs(v) > 0.55 * vmax
                        ax.text(
                            pi,
                            ri,
                            txt,
                            ha="center",
                            va="center",
                            fontsize=8,
                            color="white" if dark else "#222222",
                        )
            axes[0].set_ylabel("target and metric")
            fig.supxlabel("partner (the co-located microservice)", fontsize=9.5)
            cb = fig.colorbar(im, ax=list(axes), shrink=0.9, pad=0.02)
            cb.set_label("IR (% of baseline; < 0 = degradation)")
            setup = f" ({self.setup_name(host, runtime)})" if self.many_setups() else ""
            blocks.append(
                self.figure(
                    fig,
                    f"Interference heat map{esc(setup)}: IR in percent of the target's Case 1 baseline, target × partner, "
                    f"one panel per case. Red: the target loses performance beside the partner; blue: it gains; grey: not measured.",
                    alt="Heat map of interference ratios, target by partner, one panel per case",
                )
            )
        return blocks

    # -- statistical tests -------------------------------------------------------------------
    def anova_sentence(self, fam: pd.DataFrame) -> str:
        metric = fam["metric"].iloc[0]
        title = f"**{metric.replace('_', ' ')}.**"
        method = fam["method"].iloc[0]
        if method == "not_testable":
            return f"{title} Not testable: {fam['note'].iloc[0] or 'too few samples'}."
        terms = fam[(fam["method"] != "kruskal") & (fam["term"] != "Residual")].copy()
        resid = fam[fam["term"] == "Residual"]
        df_res = int(resid["df"].iloc[0]) if len(resid) else None
        names = {"case": "placement (case)", "partner": "the partner", "case:partner": "their interaction"}

        def test(r):
            return f"F({num(r['df'], 0)}, {df_res}) = {num(r['F'])}, {p_str(r['p'])}"

        sig = terms[terms["p"] < ALPHA].sort_values("partial_eta_sq", ascending=False)
        if sig.empty:
            top = terms.sort_values("partial_eta_sq", ascending=False).iloc[0]
            s = (
                f"{title} Neither factor changes it significantly at α = {ALPHA:g}: the largest effect is "
                f"{names.get(top['term'], top['term'])} with partial η² = {num(top['partial_eta_sq'], 3)} ({test(top)})."
            )
        else:
            first = sig.iloc[0]
            s = (
                f"{title} {cap(names.get(first['term'], first['term']))} matters most: partial η² = "
                f"{num(first['partial_eta_sq'], 3)}, a {eta_band(first['partial_eta_sq'])} effect ({test(first)})."
            )
            rest = [r for _, r in terms.iterrows() if r["term"] != first["term"]]
            if rest:
                s += (
                    " "
                    + cap(
                        "; ".join(
                            f"{names.get(r['term'], r['term'])}: partial η² = {num(r['partial_eta_sq'], 3)} "
                            f"({eta_band(r['partial_eta_sq'])}, {p_str(r['p'])}{'' if r['p'] < ALPHA else ', not significant'})"
                            for r in rest
                        )
                    )
                    + "."
                )
        kw = fam[fam["method"] == "kruskal"]
        if len(kw):
            k = kw.iloc[0]
            agrees = (k["p"] < ALPHA) == bool(((terms["term"] == k["term"]) & (terms["p"] < ALPHA)).any())
            s += (
                f" The residuals are not normal (Shapiro–Wilk {p_str(k['shapiro_p'])}), so the rank-based "
                f"Kruskal–Wallis test on {k['term']} is given too: H({num(k['df'], 0)}) = {num(k['F'])}, "
                f"{p_str(k['p'])}, which {'agrees' if agrees else 'disagrees'} with the ANOVA."
            )
        note = fam["note"].iloc[0] if "note" in fam else ""
        if method != "anova2" and note:
            s += f" (Model: {method.replace('_', ' ')}; {note}.)"
        return s

    def anova_blocks(self) -> list[Block]:
        a = self.anova
        if a.empty:
            return [md("No ANOVA results.")]
        blocks = [
            md(
                f"Per target and metric, a two-way ANOVA of the concurrent cases (2, 3a, 3b) with the factors "
                f"placement (case) and partner. Partial η² is the share of the variance a factor explains "
                f"beside the residual; the bands are Cohen's (small from {ETA_BANDS[2][0]:g}, medium from "
                f"{ETA_BANDS[1][0]:g}, large from {ETA_BANDS[0][0]:g}); significance at α = {ALPHA:g}."
            )
        ]
        for host, runtime in self.setups():
            for t in self.targets():
                fam_all = a[(a["target"] == t) & (a["host"] == host) & (a["runtime"] == runtime)]
                if fam_all.empty:
                    continue
                rows = []
                sentences = []
                for metric in self.metrics_of(t):
                    fam = fam_all[fam_all["metric"] == metric]
                    if fam.empty:
                        continue
                    sentences.append(self.anova_sentence(fam))
                    for _, r in fam.iterrows():
                        method = (
                            "Kruskal–Wallis (H)"
                            if r["method"] == "kruskal"
                            else r["method"].replace("_", " ")
                        )
                        rows.append(
                            [
                                metric,
                                r["term"] or "–",
                                method,
                                num(r["df"], 0),
                                sci(r["sum_sq"]),
                                num(r["F"]),
                                p_str(r["p"]).replace("p ", "").replace("= ", ""),
                                num(r["partial_eta_sq"], 3),
                                eta_band(r["partial_eta_sq"]) if is_num(r["partial_eta_sq"]) else "",
                            ]
                        )
                sig_rows = [
                    i
                    for i, r in enumerate(rows)
                    if r[6].startswith("<") or (r[6] not in ("–",) and _float(r[6]) < ALPHA)
                ]
                setup = f" ({self.setup_name(host, runtime)})" if self.many_setups() else ""
                blocks.append(
                    md(f"#### {self.name(t)} ({t}){setup}\n\n" + "\n".join(f"- {x}" for x in sentences))
                )
                blocks.append(
                    self.table(
                        ["Metric", "Term", "Method", "df", "Sum sq.", "F (H)", "p", "Partial η²", "Effect"],
                        rows,
                        f"ANOVA of {esc(self.name(t))} over Cases 2, 3a and 3b{esc(setup)}: value ~ case × partner.",
                        group_first=True,
                        numeric_from=3,
                        cell_class=lambda i, j, s=set(sig_rows): "sig-cell" if j == 6 and i in s else "",
                        notes=f"Bold p: significant at α = {ALPHA:g}.",
                    )
                )
        return blocks

    def posthoc_sentence(self, d: pd.DataFrame, target: str, partner: str) -> str:
        """Which cases differ from the baseline, over the target's metrics (d: one partner)."""
        lab = self.label(target, partner)
        d = d[d["group1"] != ""]
        if d.empty:
            return f"{lab}: no comparison possible."
        metrics = list(dict.fromkeys(d["metric"]))
        n = len(metrics)
        base = d[d["group1"] == "1"]
        by_case = {}
        for c in [c for c in CONCURRENT if c in set(base["group2"])]:
            x = base[base["group2"] == c]
            by_case[c] = (int(x["reject"].sum()), len(x), x["p_adj"].min())
        parts = []
        always = [c for c, (k, m, _) in by_case.items() if k == m]
        never = [c for c, (k, m, _) in by_case.items() if k == 0]
        some = [c for c in by_case if c not in always and c not in never]
        scope = " in every metric" if n > 1 else ""
        if always:
            verb = "differs" if len(always) == 1 else "differ"
            parts.append(f"{and_list(CASE_NAME[c] for c in always)} {verb} from the baseline{scope}")
        for c in some:
            k, m, _ = by_case[c]
            parts.append(f"{CASE_NAME[c]} in {k} of {m} metrics")
        if never:
            if n == 1:
                parts.append(
                    f"{and_list(f'{CASE_NAME[c]} ({p_str(by_case[c][2])})' for c in never)} "
                    f"{'does' if len(never) == 1 else 'do'} not"
                )
            else:
                parts.append(f"{and_list(CASE_NAME[c] for c in never)} in none")
        conc = d[d["group1"] != "1"]
        s = f"{lab}: " + "; ".join(parts) + "."
        if len(conc):
            sig = int(conc["reject"].sum())
            s += f" Between concurrent cases, {sig} of {len(conc)} comparisons differ"
            s += "." if n == 1 else f" (over {n} metrics)."
        return s

    def posthoc_blocks(self) -> list[Block]:
        p = self.posthoc
        if p.empty:
            return [md("No post hoc results.")]
        blocks = [
            md(
                f"Tukey HSD between the cases, per target, metric and partner (Case 1 is the target's baseline; "
                f"family-wise α = {ALPHA:g}). Each cell: the difference of means (column case minus row case) "
                f"and its adjusted p; shaded: significant."
            )
        ]
        comps = [("1", "2"), ("1", "3a"), ("1", "3b"), ("2", "3a"), ("2", "3b"), ("3a", "3b")]
        for host, runtime in self.setups():
            for t in self.targets():
                d_t = p[(p["target"] == t) & (p["host"] == host) & (p["runtime"] == runtime)]
                if d_t.empty:
                    continue
                present = [c for c in comps if ((d_t["group1"] == c[0]) & (d_t["group2"] == c[1])).any()]
                rows, sig = [], set()
                sentences = [
                    self.posthoc_sentence(d_t[d_t["partner"] == partner], t, partner)
                    for partner in [x for x in self.order() if x in set(d_t["partner"])]
                ]
                for metric in self.metrics_of(t):
                    for partner in [x for x in self.order() if x in set(d_t["partner"])]:
                        d = d_t[(d_t["metric"] == metric) & (d_t["partner"] == partner)]
                        if d.empty:
                            continue
                        row = [metric, self.label(t, partner)]
                        for j, (g1, g2) in enumerate(present):
                            x = d[(d["group1"] == g1) & (d["group2"] == g2)]
                            if x.empty:
                                row.append("–")
                                continue
                            x = x.iloc[0]
                            row.append(
                                (
                                    "html",
                                    f"{esc(num(x['meandiff']))}<br><span class='muted'>{esc(p_str(x['p_adj']))}</span>",
                                )
                            )
                            if x["reject"]:
                                sig.add((len(rows), j + 2))
                        rows.append(row)
                if not rows:
                    continue
                unit_note = ", ".join(f"{m}: {self.unit_of(t, m)}" for m in self.metrics_of(t))
                setup = f" ({self.setup_name(host, runtime)})" if self.many_setups() else ""
                blocks.append(
                    md(f"#### {self.name(t)} ({t}){setup}\n\n" + "\n".join(f"- {x}" for x in sentences))
                )
                blocks.append(
                    self.table(
                        ["Metric", "Target(+partner)"]
                        + [f"{CASE_NAME[b]} − {CASE_NAME[a]}" for a, b in present],
                        rows,
                        f"Tukey HSD of {esc(self.name(t))}{esc(setup)}: differences of means ({esc(unit_note)}).",
                        group_first=True,
                        numeric_from=2,
                        table_class="rpt-table rpt-small",
                        cell_class=lambda i, j, s=sig: "sig-cell" if (i, j) in s else "",
                    )
                )
        return blocks

    # -- comparison with the published values ------------------------------------------------
    def published_ir(self) -> pd.DataFrame:
        """One IR per paper and combination: printed in a table, else computed from the paper's
        tabulated means (its Case 1 row as the baseline), else stated in its text."""
        cols = ["paper", "source", "case", "target", "partner", "metric", "ir", "ir_from"]
        out = []
        if len(self.pub_ir):
            d = self.pub_ir.copy()
            d["ir_from"] = "printed"
            out.append(d.reindex(columns=cols))
        if len(self.pub_means):
            m = self.pub_means
            base = m[m["case"] == "1"].set_index(["paper", "target", "metric"])
            rows = []
            for _, r in m[m["case"] != "1"].iterrows():
                k = (r["paper"], r["target"], r["metric"])
                if k not in base.index or not is_num(r["mean"]):
                    continue
                b = base.loc[[k]].iloc[0]
                if not is_num(b["mean"]) or b["mean"] == 0:
                    continue
                hib = bool(r.get("higher_is_better", True))
                sign = 1 if hib else -1
                rows.append(
                    {
                        "paper": r["paper"],
                        "source": r["source"],
                        "case": r["case"],
                        "target": r["target"],
                        "partner": r["partner"],
                        "metric": r["metric"],
                        "ir": sign * (r["mean"] - b["mean"]) / b["mean"],
                        "ir_from": "the paper's means",
                    }
                )
            if rows:
                out.append(pd.DataFrame(rows, columns=cols))
        if not out:
            return pd.DataFrame(columns=cols)
        allp = pd.concat(out, ignore_index=True)
        allp = allp[allp["metric"].fillna("") != ""]
        from_table = allp["source"].fillna("").str.lower().str.startswith("table")
        allp["ir_from"] = np.where(
            allp["ir_from"] == "printed", np.where(from_table, "printed", "text"), allp["ir_from"]
        )
        rank = {"printed": 0, "the paper's means": 1, "text": 2}
        allp["_pri"] = allp["ir_from"].map(rank)
        allp = allp.sort_values("_pri", kind="stable").drop_duplicates(
            ["paper", "case", "target", "partner", "metric"]
        )
        return allp.drop(columns="_pri")

    @staticmethod
    def direction(ir) -> int:
        if not is_num(ir):
            return 0
        return 0 if abs(ir) < NEGLIGIBLE_IR else (1 if ir > 0 else -1)

    def comparison(self) -> pd.DataFrame:
        pub = self.published_ir()
        if pub.empty or self.ir.empty:
            return pd.DataFrame()
        ours = self.ir.dropna(subset=["ir"])
        m = pub.merge(ours, on=["case", "target", "partner", "metric"], suffixes=("_paper", ""))
        if m.empty:
            return pd.DataFrame()
        m = m.rename(columns={"ir_paper": "paper_ir"})
        m["dir_paper"] = m["paper_ir"].map(self.direction)
        m["dir_ours"] = m["ir"].map(self.direction)
        m["direction_agrees"] = m["dir_paper"] == m["dir_ours"]
        m["ratio"] = np.where(m["paper_ir"].abs() > 0, m["ir"].abs() / m["paper_ir"].abs(), np.nan)
        m["in_ci"] = (m["ir_ci_low"] <= m["paper_ir"]) & (m["paper_ir"] <= m["ir_ci_high"])

        def verdict(r):
            if r["dir_paper"] == 0 and r["dir_ours"] == 0:
                return "both negligible"
            if r["dir_paper"] == 0:
                return "paper negligible, not here"
            if r["dir_ours"] == 0:
                return "negligible here"
            if r["dir_paper"] != r["dir_ours"]:
                return "opposite sign"
            if r["ratio"] > SIMILAR_FACTOR:
                return f"same sign, {num(r['ratio'], 1)}× stronger here"
            if r["ratio"] < 1 / SIMILAR_FACTOR:
                return f"same sign, {num(r['ratio'], 2)}× as strong here"
            return "same sign, similar size"

        m["verdict"] = m.apply(verdict, axis=1)
        order = {c: i for i, c in enumerate(CASES)}
        pos = {x: i for i, x in enumerate(self.order())}
        m["_o"] = m["case"].map(order)
        m["_t"] = m["target"].map(lambda x: pos.get(x, 99))
        m["_p"] = m["partner"].map(lambda x: pos.get(x, 99))
        return (
            m.sort_values(["paper", "_t", "metric", "_o", "_p"])
            .drop(columns=["_o", "_t", "_p"])
            .reset_index(drop=True)
        )

    def comparison_blocks(self) -> list[Block]:
        if not len(self.pub_ir) and not len(self.pub_means):
            return [
                md(
                    "The published tables (report/published/means.tsv and interference_ratios.tsv) are not "
                    "available, so there is nothing to compare with yet."
                )
            ]
        c = self.comparison()
        if c.empty:
            return [
                md(
                    "None of the published combinations (case, target, partner, metric) was measured in this run."
                )
            ]
        blocks = [md(self.comparison_summary(c))]
        rows, cls = [], {}
        for i, (_, r) in enumerate(c.iterrows()):
            ci = f"[{ir_str(r['ir_ci_low'])}, {ir_str(r['ir_ci_high'])}]" if is_num(r["ir_ci_low"]) else "–"
            rows.append(
                [
                    f"{r['paper']}, {r['source']}"
                    + {"printed": "", "text": "", "the paper's means": "*"}[r["ir_from"]],
                    CASE_NAME.get(r["case"], r["case"]),
                    self.label(r["target"], r["partner"])
                    + (f" ({self.setup_name(r['host'], r['runtime'])})" if self.many_setups() else ""),
                    r["metric"],
                    ir_str(r["paper_ir"]),
                    ir_str(r["ir"]),
                    ci,
                    "yes" if r["in_ci"] else "no",
                    r["verdict"],
                ]
            )
            cls[i] = "agree-cell" if r["direction_agrees"] else "flag-cell"
        blocks.append(
            self.table(
                [
                    "Paper, source",
                    "Case",
                    "Target(+partner)",
                    "Metric",
                    "IR paper",
                    "IR here",
                    "95 % CI here",
                    "Paper in CI",
                    "Verdict",
                ],
                rows,
                "The papers' interference ratios beside this machine's. Direction: |IR| below "
                f"{NEGLIGIBLE_IR:g} counts as no interference; “similar size”: same sign and within a factor "
                f"{SIMILAR_FACTOR:g}. * IR computed from the paper's means (no IR printed).",
                numeric_from=4,
                text_cols=(8,),
                cell_class=lambda i, j: cls[i] if j == 8 else "",
                table_class="rpt-table rpt-small",
            )
        )
        f = self.comparison_figure(c)
        if f:
            blocks.append(f)
        blocks += self.means_comparison_blocks()
        return blocks

    def comparison_summary(self, c: pd.DataFrame) -> str:
        n = len(c)
        agree = int(c["direction_agrees"].sum())
        similar = int((c["verdict"].isin(["same sign, similar size", "both negligible"])).sum())
        in_ci = int(c["in_ci"].sum())
        lines = [
            (
                f"**This machine reproduces the direction of {agree} of the papers' {n} interference ratios "
                f"({pct(agree / n, 0, sign=False)})** for the combinations it measured (gain, loss, or none within "
                f"±{NEGLIGIBLE_IR:g}); {similar} are also of similar size (within a factor {SIMILAR_FACTOR:g}), and for "
                f"{in_ci} the paper's value lies inside this run's 95 % interval."
            )
        ]
        by = c.groupby("target")["direction_agrees"].agg(["sum", "count"])
        lines.append(
            "By target: "
            + "; ".join(
                f"{self.name(t)} {int(by.loc[t, 'sum'])}/{int(by.loc[t, 'count'])}"
                for t in self.order()
                if t in by.index
            )
            + "."
        )
        # The papers' research questions, from their own numbers and ours.
        for a, b, what in (
            ("2", "3a", "intra-container (Case 2) against inter-container (Case 3a)"),
            ("3b", "3a", "with cgroup limits (Case 3b) against without (Case 3a)"),
        ):
            res = self.case_contrast(c, a, b)
            if res:
                total, paper_worse, ours_worse, agree_n = res
                lines.append(
                    f"{cap(what)}: the papers have Case {a} worse in {paper_worse} of {total} "
                    f"combinations, this machine in {ours_worse}; the two agree on {agree_n} of {total}."
                )
        worst = []
        for (paper, host, runtime, t, metric), g in c.groupby(
            ["paper", "host", "runtime", "target", "metric"]
        ):
            if self.many_setups():
                paper = f"{paper} vs {self.setup_name(host, runtime)}"
            if len(g) < 2:
                continue
            pw = g.loc[g["paper_ir"].idxmin()]
            ow = g.loc[g["ir"].idxmin()]
            same = (pw["case"], pw["partner"]) == (ow["case"], ow["partner"])
            lab = f"{CASE_NAME[pw['case']]} {self.label(t, pw['partner'])}"
            if same:
                worst.append(
                    f"{paper}: the worst {self.metric_title(t, metric)} combination, {lab} ({ir_str(pw['paper_ir'])}), is the worst here too ({ir_str(ow['ir'])})"
                )
            else:
                worst.append(
                    f"{paper}: the worst {self.metric_title(t, metric)} combination is {lab} ({ir_str(pw['paper_ir'])}); here it is "
                    f"{CASE_NAME[ow['case']]} {self.label(t, ow['partner'])} ({ir_str(ow['ir'])})"
                )
        if worst:
            lines.append("Worst placements:\n" + "\n".join(f"    - {cap(w)}." for w in worst))
        bad = c[~c["direction_agrees"]]
        if len(bad):
            shown = bad.head(6)
            lines.append(
                "Not reproduced: "
                + "; ".join(
                    f"{CASE_NAME[r['case']]} {self.label(r['target'], r['partner'])} {r['metric']} "
                    f"({r['paper']}: {ir_str(r['paper_ir'])}, here {ir_str(r['ir'])})"
                    for _, r in shown.iterrows()
                )
                + (f"; and {len(bad) - len(shown)} more (table below)." if len(bad) > len(shown) else ".")
            )
        return lines[0] + "\n\n" + "\n".join(f"- {x}" for x in lines[1:])

    def case_contrast(self, c: pd.DataFrame, a: str, b: str):
        """(combinations, paper has a worse, ours has a worse, agreements) over target/partner/metric."""
        keys = ["paper", "host", "runtime", "target", "partner", "metric"]
        x = c[c["case"] == a].set_index(keys)
        y = c[c["case"] == b].set_index(keys)
        common = x.index.intersection(y.index)
        if not len(common):
            return None

        def d(v):
            return 0 if abs(v) < NEGLIGIBLE_IR else (1 if v > 0 else -1)

        paper = [d(x.loc[k, "paper_ir"] - y.loc[k, "paper_ir"]) for k in common]
        ours = [d(x.loc[k, "ir"] - y.loc[k, "ir"]) for k in common]
        return (
            len(common),
            sum(v < 0 for v in paper),
            sum(v < 0 for v in ours),
            sum(p == o for p, o in zip(paper, ours)),
        )

    def comparison_figure(self, c: pd.DataFrame) -> Block | None:
        if len(c) < 2:
            return None
        fig = Figure(figsize=(5.6, 4.6), layout="constrained")
        ax = fig.subplots()
        lim = (
            max(
                0.05,
                float(
                    np.nanmax(
                        np.abs(
                            np.r_[c["paper_ir"], c["ir"], c["ir_ci_low"].fillna(0), c["ir_ci_high"].fillna(0)]
                        )
                    )
                ),
            )
            * 100
            * 1.1
        )
        ax.axhspan(-NEGLIGIBLE_IR * 100, NEGLIGIBLE_IR * 100, color="#f0f0f0", zorder=0)
        ax.axvspan(-NEGLIGIBLE_IR * 100, NEGLIGIBLE_IR * 100, color="#f0f0f0", zorder=0)
        ax.plot([-lim, lim], [-lim, lim], color="#999999", linewidth=0.8, linestyle="--")
        ax.axhline(0, color="#444444", linewidth=0.6)
        ax.axvline(0, color="#444444", linewidth=0.6)
        markers = {t: mk for t, mk in zip(self.order(), "osD^vP*X")}
        for _, r in c.iterrows():
            y = r["ir"] * 100
            yerr = None
            if is_num(r["ir_ci_low"]):
                yerr = [[y - r["ir_ci_low"] * 100], [r["ir_ci_high"] * 100 - y]]
            ax.errorbar(
                r["paper_ir"] * 100,
                y,
                yerr=yerr,
                fmt=markers.get(r["target"], "o"),
                color=CASE_COLOR.get(r["case"], "#333333"),
                ecolor="#aaaaaa",
                elinewidth=0.8,
                markersize=6,
                markeredgecolor="white",
                markeredgewidth=0.5,
            )
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.grid(True, axis="both")
        ax.set_xlabel("IR in the paper (% of its baseline)")
        ax.set_ylabel("IR on this machine (% of its baseline)")
        handles = [Patch(color=CASE_COLOR[k], label=CASE_NAME[k]) for k in CONCURRENT if k in set(c["case"])]
        from matplotlib.lines import Line2D

        handles += [
            Line2D(
                [],
                [],
                marker=markers.get(t, "o"),
                linestyle="",
                color="#555555",
                label=f"{t} ({self.name(t)})",
            )
            for t in self.order()
            if t in set(c["target"])
        ]
        ax.legend(handles=handles, loc="upper left", fontsize=8)
        return self.figure(
            fig,
            "Published against reproduced interference ratios, one point per combination (error bars: this run's 95 % interval). "
            "On the dashed diagonal the two agree; in the lower-left and upper-right quadrants they have the same sign; "
            f"the grey bands mark |IR| < {NEGLIGIBLE_IR:g}.",
            alt="Scatter plot of published against reproduced interference ratios",
        )

    def means_comparison_blocks(self) -> list[Block]:
        m = self.pub_means
        if m.empty:
            return []
        ours = self.summary
        j = m.merge(ours, on=["case", "target", "partner", "metric"], suffixes=("_paper", ""))
        if j.empty:
            return []
        rows = []
        order = {c: i for i, c in enumerate(CASES)}
        pos = {x: i for i, x in enumerate(self.order())}
        j["_o"] = j["case"].map(order)
        j["_p"] = j["partner"].map(lambda x: pos.get(x, -1) if x else -1)
        j = j.sort_values(["paper", "target", "metric", "_o", "_p"])
        for _, r in j.iterrows():
            pu, ou = r.get("unit_paper", ""), r.get("unit", "")
            factor = None
            if pu == ou:
                factor = 1.0
            elif UNIT_FAMILY.get(pu) and UNIT_FAMILY.get(pu) == UNIT_FAMILY.get(ou):
                factor = UNIT_FACTORS[pu] / UNIT_FACTORS[ou]
            pm = r["mean_paper"] * factor if factor is not None and is_num(r["mean_paper"]) else np.nan
            rows.append(
                [
                    f"{r['paper']}, {r['source']}",
                    CASE_NAME.get(r["case"], r["case"]),
                    self.label(r["target"], r["partner"]),
                    f"{r['metric']} ({ou})",
                    num(pm) if factor is not None else f"{num(r['mean_paper'])} {pu}",
                    num(r["mean"]),
                    num(r["mean"] / pm, 2) if is_num(pm) and pm else "–",
                    num(r["cv_paper"], 3)
                    if is_num(r["cv_paper"])
                    else (num(r["sd_paper"] / r["mean_paper"], 3) + "*" if is_num(r["sd_paper"]) else "–"),
                    num(r["cv"], 3),
                ]
            )
        return [
            md(
                "The absolute values depend on the hardware and the workload sizes, so the means are shown "
                "for scale only; the interference ratios above are the comparable quantity. This machine: "
                f"{self.host_line()}."
            ),
            self.table(
                [
                    "Paper, source",
                    "Case",
                    "Target(+partner)",
                    "Metric (unit here)",
                    "Mean paper",
                    "Mean here",
                    "Here / paper",
                    "CV paper",
                    "CV here",
                ],
                rows,
                "The papers' means beside this machine's (the papers' values converted to this run's unit where the units "
                "differ). * CV computed from the paper's SD and mean (no CV printed).",
                numeric_from=4,
                table_class="rpt-table rpt-small",
            ),
        ]

    # -- data quality ------------------------------------------------------------------------
    def quality_blocks(self) -> list[Block]:
        s = self.summary
        blocks = []
        total = int(s["n"].sum() + s["n_excluded_overlap"].sum() + s["n_excluded_failed"].sum())
        out_ov = int(s["n_excluded_overlap"].sum())
        failed = int(s["n_excluded_failed"].sum())
        text = (
            f"**Samples left out.** Of {total} samples (one metric value of one iteration), "
            f"{out_ov} ({pct(out_ov / total if total else 0, 1, sign=False)}) lie outside the overlap window and "
            f"{failed} ({pct(failed / total if total else 0, 1, sign=False)}) failed. An iteration outside the overlap "
            f"started before both members of its pair were running, or ended after one had stopped, so it ran partly "
            f"alone; a failed one exited non-zero, was killed (out of memory), timed out, or gave no parsable value. "
            f"Neither enters any statistic."
        )
        if len(self.runs):
            it = int(self.runs["n_iterations"].sum())
            ov = int(self.runs["n_in_overlap"].sum())
            fl = int(self.runs["n_failed"].sum())
            text += f" Counted in iterations: {it} ran, {ov} inside the overlap (Case 1: all), {fl} failed."
        blocks.append(md(text))
        ex = s[(s["n_excluded_overlap"] > 0) | (s["n_excluded_failed"] > 0)]
        if len(ex):
            # One iteration gives a sample of every metric of its target: per group, the largest
            # count over the metrics is the number of iterations left out.
            g = (
                ex.groupby(["host", "runtime", "case", "target", "partner"], sort=False)
                .agg(
                    n_min=("n", "min"),
                    n_max=("n", "max"),
                    outside=("n_excluded_overlap", "max"),
                    failed=("n_excluded_failed", "max"),
                    metrics=("metric", "nunique"),
                )
                .reset_index()
            )
            rows = [
                [
                    CASE_NAME.get(r["case"], r["case"]),
                    self.label(r["target"], r["partner"]),
                    num(r["n_max"], 0)
                    if r["n_min"] == r["n_max"]
                    else f"{num(r['n_min'], 0)}–{num(r['n_max'], 0)}",
                    num(r["outside"], 0),
                    num(r["failed"], 0),
                ]
                for _, r in self.sort_rows(g).iterrows()
            ]
            blocks.append(
                self.table(
                    ["Case", "Target(+partner)", "Counted", "Outside overlap", "Failed"],
                    rows,
                    f"{plural(len(rows), 'group')} with iterations left out (per iteration, over the target's metrics).",
                    group_first=True,
                    numeric_from=2,
                    table_class="rpt-table rpt-small",
                )
            )
        if (
            len(self.runs)
            and (self.runs["n_failed"] > 0).any() | (self.runs["events"].fillna("") != "").any()
        ):
            r = self.runs[(self.runs["n_failed"] > 0) | (self.runs["events"].fillna("") != "")]
            blocks.append(
                md(
                    "**Runs with failures or events:** "
                    + "; ".join(
                        f"{CASE_NAME.get(x['case'], x['case'])} {x['pair']}: {num(x['n_failed'], 0)} failed"
                        + (f" ({x['events']})" if x["events"] else "")
                        for _, x in r.iterrows()
                    )
                    + "."
                )
            )
        cv = self.sort_rows(s[s["cv"] > CV_FLAG])
        if len(cv):
            rows = [
                [
                    CASE_NAME.get(r["case"], r["case"]),
                    self.label(r["target"], r["partner"]),
                    r["metric"],
                    num(r["n"], 0),
                    num(r["mean"]),
                    num(r["median"]),
                    num(r["cv"], 3),
                ]
                for _, r in cv.iterrows()
            ]
            blocks.append(
                md(
                    f"**High variation.** {plural(len(cv), 'group')} of {len(s)} have a coefficient of variation "
                    f"above {pct(CV_FLAG, 0, sign=False)}; for them the median and trimmed mean are the more "
                    f"robust averages (both are in the result tables)."
                )
            )
            blocks.append(
                self.table(
                    ["Case", "Target(+partner)", "Metric", "n", "Mean", "Median", "CV"],
                    rows,
                    f"Groups with CV above {pct(CV_FLAG, 0, sign=False)}.",
                    group_first=True,
                    numeric_from=3,
                    cell_class=lambda i, j: "flag-cell" if j == 6 else "",
                    table_class="rpt-table rpt-small",
                )
            )
        else:
            blocks.append(
                md(
                    f"**Variation.** No group has a coefficient of variation above {pct(CV_FLAG, 0, sign=False)}."
                )
            )
        # Notes of the statistics (why an interval is missing or may be too narrow).
        notes = {}
        for df, col, what in ((s, "note", "summary"), (self.ir, "reason", "interference ratio")):
            if col in df:
                for v in df[col].fillna(""):
                    for part in [p.strip() for p in str(v).split(";") if p.strip()]:
                        notes[(what, part)] = notes.get((what, part), 0) + 1
        if notes:
            blocks.append(
                md(
                    "**Notes of the statistics step:**\n\n"
                    + "\n".join(
                        f"- {what}, {plural(n, 'group')}: {esc(note)}"
                        for (what, note), n in sorted(notes.items())
                    )
                )
            )
        small = s[(s["case"] == "1") & (s["n"] < 10)]
        if len(small):
            blocks.append(
                md(
                    f"**Small baselines.** The Case 1 baseline of {and_list(sorted(set(small['target'])))} has only "
                    f"{and_list(sorted({int(x) for x in small['n']}))} samples: every IR of it inherits that uncertainty."
                )
            )
        if len(self.runs):
            mism = []
            for k in (1, 2):
                col = f"member{k}_limits_match"
                if col in self.runs:
                    bad = self.runs[~self.runs[col].fillna("").isin(["yes", "unlimited", ""])]
                    mism += [
                        f"{CASE_NAME[x['case']]} {x['pair']} member {k}: {x[col]}" for _, x in bad.iterrows()
                    ]
            limited = sum(
                int((self.runs[f"member{k}_limits_match"] == "yes").sum())
                for k in (1, 2)
                if f"member{k}_limits_match" in self.runs
            )
            blocks.append(
                md(
                    "**Limits.** "
                    + (
                        f"Every limited container ({plural(limited, 'member record')}) read back exactly the cgroup limits requested."
                        if not mism
                        else "Limits read back differ from those requested: " + "; ".join(mism) + "."
                    )
                )
            )
        return blocks

    # -- colophon ----------------------------------------------------------------------------
    def colophon(self) -> list[Block]:
        import platform

        versions = {
            "Python": platform.python_version(),
            "pandas": pd.__version__,
            "numpy": np.__version__,
            "matplotlib": matplotlib.__version__,
        }
        files = [
            "summary.tsv",
            "interference.tsv",
            "anova.tsv",
            "posthoc.tsv",
            "runs.tsv",
            "environment.json",
        ]
        pub = (
            [p.name for p in sorted(self.published_dir.glob("*.tsv"))]
            if self.published_dir and self.published_dir.exists()
            else []
        )
        return [
            md(
                f"Rendered {self.generated_at} by **{esc(self.renderer or 'an unnamed renderer')}**, with "
                + ", ".join(f"{k} {v}" for k, v in versions.items())
                + f". Every number in this document is read from results/stats/ ({', '.join(files)})"
                + (f" and report/published/ ({', '.join(pub)})" if pub else "")
                + f"; the config's sha256 is `{self.env.get('config_sha256', '–')}`."
            )
        ]


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return float("nan")


def load(stats_dir, published_dir=None, renderer: str = "") -> Report:
    return Report(stats_dir, published_dir, renderer)
