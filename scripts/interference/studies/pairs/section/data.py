"""The pair study's tables as the report reads them (results/stats/pairs/), and how it names
things: microservices in config order, targets, metrics, units, resources, case × partner rows."""

from __future__ import annotations

import pandas as pd

from interference.core import case_colours
from interference.core.table_schema import FLAG
from interference.rendering.kit.blocks import Block
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import CASES, REGISTRY
from interference.studies.pairs.members import beside_runs
from interference.studies.pairs.statistics import published

STUDY = "pairs"
# Views of the case registry (cases.REGISTRY), by case id.
CASE_NAME = {c.id: c.name for c in REGISTRY.values()}
CASE_PLACEMENT = {c.id: c.placement for c in REGISTRY.values()}
CASE_COLOR = case_colours.CASE_COLOR  # one colour per case in every figure of the report
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
ETA_BANDS = ((0.14, "large"), (0.06, "medium"), (0.01, "small"), (0.0, "negligible"))  # Cohen

RUNS_NUMERIC = [
    "repetition", "started", "finished", "duration_s", "iterations_requested", "window_s", "n_iterations",
    "n_failed", "n_in_overlap", "overlap_start", "overlap_end", "overlap_s", "loadavg_1m_before",
    "ci_half_width_max", "window_final_s", "window_extended_s", "iteration_timeout_s",
]  # fmt: skip
# run_members.tsv's counts as numbers; threads stay text, as the sentences quote them.
MEMBERS_NUMERIC = [c for c in schemas.RUN_MEMBERS.numeric if c != "threads"]
# Each table's columns and its number columns, from its declaration (schemas.py).
TABLES = {
    name: (schema.columns, schema.numeric)
    for name, schema in {
        "summary": schemas.SUMMARY,
        "interference": schemas.INTERFERENCE,
        "anova": schemas.ANOVA,
        "posthoc": schemas.POSTHOC,
        "runtimes": schemas.RUNTIMES,
    }.items()
}


def eta_band(eta) -> str:
    for bound, name in ETA_BANDS:
        if pd.notna(eta) and eta >= bound:
            return name
    return "–"


class PairsData:
    """The tables and the naming every part of the section uses."""

    def __init__(self, doc):
        self.doc = doc
        self.env = doc.env
        self.ms = doc.ms
        self.config = doc.study_config(STUDY)
        st = doc.stats
        t = {}
        for name, (columns, numeric) in TABLES.items():
            df = st.table(STUDY, name, numeric)
            t[name] = df if len(df.columns) else pd.DataFrame(columns=columns)
        self.summary, self.ir, self.anova, self.posthoc = (
            t[k] for k in ("summary", "interference", "anova", "posthoc")
        )
        self.runtimes = t["runtimes"]
        self.runs = st.table(STUDY, "runs", RUNS_NUMERIC)
        # One row per member of a run, with its run's case, pair and after_all (runs.tsv).
        members = st.table(STUDY, "run_members", MEMBERS_NUMERIC)
        if not len(members.columns):  # not written: no members
            members = pd.DataFrame(columns=schemas.RUN_MEMBERS.columns)
        self.members = beside_runs(members, self.runs)
        path = st.path(STUDY, "published")
        self.published = published.read(path) if path.exists() else pd.DataFrame(columns=published.COLUMNS)
        self.fidelity = st.table(STUDY, "fidelity", schemas.FIDELITY.numeric)
        self.case_contrasts = self._declared(schemas.CASE_CONTRASTS, "case_contrasts")
        self.worst_placements = self._declared(schemas.WORST_PLACEMENTS, "worst_placements")

    def _declared(self, schema, name: str) -> pd.DataFrame:
        """A table read by its declaration (numbers, flags); empty with its columns when not written."""
        df = self.doc.stats.table(STUDY, name, schema.numeric, flags=tuple(schema.of(FLAG)))
        return df if len(df.columns) else pd.DataFrame(columns=schema.columns)

    # -- numbering through the document ------------------------------------------------------
    def table(self, columns, rows, caption, **kw) -> Block:
        return self.doc.table(columns, rows, caption, **kw)

    def figure(self, fig, caption: str, alt: str, width_px: int | None = None) -> Block:
        return self.doc.figure(fig, caption, alt, width_px)

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

    @staticmethod
    def setup_name(host, runtime) -> str:
        return f"{runtime} on {host}"

    def many_setups(self) -> bool:
        return len(self.setups()) > 1

    def setup_suffix(self, host, runtime, fmt: str = " ({})") -> str:
        """' (docker on h)' where several setups are reported, else ''."""
        return fmt.format(self.setup_name(host, runtime)) if self.many_setups() else ""

    def targets(self) -> list[str]:
        present = set(self.summary["target"])
        return [m for m in self.order() if m in present]

    def metrics_of(self, target: str) -> list[str]:
        declared = [m["name"] for m in self.ms.get(target, {}).get("metrics", [])]
        present = list(dict.fromkeys(self.summary.loc[self.summary["target"] == target, "metric"]))
        return [m for m in declared if m in present] + [m for m in present if m not in declared]

    def _first(self, target: str, metric: str):
        s = self.summary
        rows = s[(s["target"] == target) & (s["metric"] == metric)]
        return rows.iloc[0] if len(rows) else None

    def unit_of(self, target: str, metric: str) -> str:
        r = self._first(target, metric)
        return r["unit"] if r is not None else ""

    def higher_is_better(self, target: str, metric: str) -> bool:
        r = self._first(target, metric)
        return bool(r["higher_is_better"]) if r is not None else True

    def resources_present(self) -> list[str]:
        res = list(dict.fromkeys(self.resource(t) for t in self.targets()))
        return [r for r in RESOURCE_ORDER if r in res] + sorted(r for r in res if r not in RESOURCE_ORDER)

    def sort_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """Rows in the papers' order: case 1, 2, 3a, 3b; partners in config order."""
        order = {m: i for i, m in enumerate(self.order())}
        d = df.copy()
        d["_c"] = d["case"].map({c: i for i, c in enumerate(CASES)}).fillna(9)
        d["_p"] = d["partner"].map(lambda p: -1 if p == "" else order.get(p, 99))
        return d.sort_values(["_c", "_p"]).drop(columns=["_c", "_p"])

    def of_setup(self, df: pd.DataFrame, host, runtime, **match) -> pd.DataFrame:
        """The rows of one host and runtime (and the given column values)."""
        sel = (df["host"] == host) & (df["runtime"] == runtime)
        for k, v in match.items():
            sel &= df[k] == v
        return df[sel]
