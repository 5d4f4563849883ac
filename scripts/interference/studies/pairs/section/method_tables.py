"""The method's tables (the report's appendices): the papers' CEEM steps mapped to this run,
the microservices and their tools, the placement cases with the limits requested and read back,
the variance between runs and iterations, and every run. Method (method.py) is the sentences."""

from __future__ import annotations

import contextlib

import numpy as np

from interference.core.table_schema import RUN_IDENTITY
from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import (
    and_list,
    bytes_h,
    duration,
    esc,
    is_num,
    num,
    numi,
    pct,
    plural,
    utc,
)
from interference.studies.pairs import schemas
from interference.studies.pairs.cases import CASES
from interference.studies.pairs.section.data import CASE_NAME, CASE_PLACEMENT, RESOURCE_TITLE

TEXT_TABLE = {"numeric_from": 99, "table_class": "rpt-table rpt-text"}


def _memory(value) -> str:
    """A memory limit read back in a container: bytes, or unlimited (cgroup v1's huge number)."""
    try:
        return "unlimited" if float(value) >= 2**62 else bytes_h(float(value))
    except (TypeError, ValueError):
        return value or "?"


def _requested(member, short=None) -> list[str]:
    """A member's limits as requested ('cpuset 0', 'memory 2g'), from its run_members.tsv row."""
    short = short or {}
    return [
        f"{short.get(key, key)} {member[column]}"
        for key, column in schemas.REQUESTED.items()
        if member.get(column, "") not in ("", None)
    ]


def _cases(cases) -> str:
    """'Case 1' or 'Cases 2, 3a and 3b'."""
    cases = list(cases)
    return f"Case{'s' if len(cases) > 1 else ''} {and_list(cases)}"


def _sizes(text: str) -> str:
    """runs.tsv's 'array_elements=20000000, ntimes=20' as 'array_elements = 20,000,000, ntimes = 20'."""
    out = []
    for part in text.split(", "):
        key, _, value = part.partition("=")
        with contextlib.suppress(ValueError):  # a word (direct_io=True) stays as recorded
            value = numi(float(value))
        out.append(f"{key} = {value}")
    return ", ".join(out)


class MethodTables:
    """The appendix tables of the method; Method adds its sentences (self.data: PairsData)."""

    def ceem(self) -> list[Block]:
        """The papers' ten CEEM steps and what each is in this run."""
        present = self.data.targets()

        def direction(t, m):
            return "higher" if self.data.higher_is_better(t, m) else "lower"

        metrics = "; ".join(
            f"{self.data.name(t)}: "
            + ", ".join(
                f"{m} ({self.data.unit_of(t, m)}, {direction(t, m)} is better)"
                for m in self.data.metrics_of(t)
            )
            for t in present
        )
        tools = "; ".join(f"{self.data.name(t)}: {self.data.ms.get(t, {}).get('tool', '?')}" for t in present)
        sizes = self.sizes_text()
        resources = and_list(
            RESOURCE_TITLE.get(self.data.resource(t), self.data.resource(t)) for t in present
        )
        engines = ", ".join(
            f"{e.get('engine', r)} {e.get('version', '?')}"
            for r, e in self.data.env.get("engines", {}).items()
        )
        n_runs = len(self.data.runs)
        n_iter = int(self.data.runs["n_iterations"].sum()) if n_runs else 0
        span = (
            f" from {utc(self.data.runs['started'].min())} to {utc(self.data.runs['finished'].max())}"
            if n_runs
            else ""
        )
        rows = [
            ("1 Requirement recognition",
             ("How much do microservices interfere when they share one container (intra-container) or one host in "
             "separate containers (inter-container), with and without cgroup limits, relative to running alone?"),
             ("The same question, on this machine: every number below is an interference ratio against this "
             "machine's own Case 1 baseline.")),
            ("2 Service feature identification", "CPU, memory, disk I/O and network of a Docker host.",
             f"The resources of the microservices measured here: {resources}."),
            ("3–4 Metrics and benchmarks", "One micro-benchmark per resource, as a microservice in a container image.",
             f"{metrics}. Tools: {tools}."),
            ("5–6 Factors and levels",
             "Placement case (1, 2, 3a, 3b) × co-located microservice; host, limits and workload sizes fixed.",
             (f"Placement: {and_list(self.ran_cases()) or '–'}; partner: "
             f"{', '.join(self.ran_microservices()) or '–'}; runtime: {engines or '–'}; limits: "
             f"{self.limits_text()}; sizes: {sizes or '–'}.")),
            ("7 Experimental design",
             "A fixed number of iterations alone; fixed-length windows for concurrent cases, averaged over the window.",
             self.design_text()),
            ("8 Implementation", "docker run of each microservice image on one host.",
             f"{plural(n_runs, 'run')}, {n_iter} iterations{span}; images, limits read back and host below."),
            ("9 Analysis", "Mean, median, trimmed mean (P10–P90), max, min, SD, CV; interference ratio IR.",
             (f"The same statistics, plus 95 % confidence intervals ({self.ci_methods()}), two-way ANOVA "
             "(case × partner) with partial η², Kruskal–Wallis where residuals are not normal, and Tukey HSD.")),
            ("10 Conclusion and reporting", "Tables, IR figures and findings.",
             ("This document, rendered from results/stats/ by the pipeline; the comparison with the published "
             "values is generated.")),
        ]  # fmt: skip
        return [
            md(
                "The papers follow the Cloud Evaluation Experiment Methodology (CEEM). Each of its steps, "
                "and what it is in this run (generated from the config, the run records and the "
                "microservices' declarations):"
            ),
            self.data.table(
                ["CEEM step", "In the papers", "In this run"],
                [list(r) for r in rows],
                "The CEEM steps of the papers mapped to this run.",
                **TEXT_TABLE,
            ),
        ]

    def benchmarks_table(self) -> Block:
        rows = []
        for t in self.data.order():
            d = self.data.ms.get(t)
            if not d or not d.get("in_config", t in self.data.targets()):
                continue
            metrics = ", ".join(
                f"{m['name']} ({m['unit']}, {'↑' if m['higher_is_better'] else '↓'})"
                for m in d.get("metrics", [])
            )
            stand_in = d.get("tool") != d.get("paper_tool")
            reason = d.get("stand_in_reason") or ("no reason declared" if stand_in else "")
            note = (
                f'<br><span class="muted">stand-in for the papers\' tool: {esc(reason)}</span>'
                if stand_in
                else ""
            )
            rows.append([
                RESOURCE_TITLE.get(self.data.resource(t), d.get("resource", "")),
                f"{d.get('name', t)} ({t})",
                metrics,
                ("html", esc(d.get("tool", "?")) + note),
                self.tool_version(t),
                d.get("paper_tool", "?"),
            ])  # fmt: skip
        return self.data.table(
            ["Resource", "Microservice", "Metrics (unit, ↑ higher / ↓ lower is better)", "Tool run here",
             "Versions in the image", "Tool in the papers"],
            rows,
            "Metrics and benchmarks (the papers' Table 2), from containers/*/microservice.yaml and the image "
            "records. A tool that differs from the papers' is a stand-in, with the declared reason.",
            **TEXT_TABLE,
        )  # fmt: skip

    def cases_blocks(self) -> list[Block]:
        """The placement cases (the papers' Figure 2) with the limits requested and read back."""
        rows = []
        r, members = self.data.runs, self.data.members
        for c in [c for c in CASES if c in set(self.data.summary["case"])]:
            req, back, window, threads = "–", "–", "–", "–"
            if len(r):
                x = r[r["case"] == c]
                reqs, backs, used = set(), set(), set()
                for _, member in members[members["case"] == c].iterrows():
                    reqs.add(", ".join(_requested(member)) or "none")
                    mem = _memory(member.get("read_memory_max", ""))
                    backs.add(f"cpuset {member.get('read_cpuset', '?')}, memory {mem}")
                    if str(member.get("threads", "")) != "":
                        used.add(f"{member['microservice']} {numi(member['threads'])}")
                req = "; ".join(sorted(reqs)) or "–"
                back = "; ".join(sorted(backs)) or "–"
                threads = ", ".join(sorted(used)) or "–"
                if c == "1":
                    window = plural(int(x["iterations_requested"].max()), "iteration") if len(x) else "–"
                elif len(x):
                    window = f"{num(x['window_s'].max(), 0)} s"
            rows.append([CASE_NAME[c], CASE_PLACEMENT[c], window, req, back, threads])
        return [
            self.data.table(
                ["Case", "Placement", "Length", "Limits requested (per container)", "Read back inside the containers",
                 "Threads"],
                rows,
                "The placement cases of the papers as run here: the limits each container asked for and what "
                "its cgroup said from inside (cpuset, memory.max or memory.limit_in_bytes). Configured limits: "
                f"{self.limits_text()}. Threads of the multithreaded microservices (Linpack's OpenBLAS, STREAM's "
                "OpenMP): `sizes.<ms>.threads`, or with 0 one per CPU the container may use (its cpuset, read back "
                "as nproc) — a CPU quota does not lower it.",
                **TEXT_TABLE,
            )
        ]  # fmt: skip

    @staticmethod
    def member_limits(member) -> str:
        """'L: cpuset 0, mem 2g → cpuset 0, mem 2.0 GiB' (HTML), from a run_members.tsv row."""
        req = _requested(member, {"memory": "mem"})
        back = f"cpuset {member.get('read_cpuset', '?')}, mem {_memory(member.get('read_memory_max', ''))}"
        match = member.get("limits_match", "")
        flag = "" if match in ("yes", "unlimited") else f' <span class="flag">mismatch: {esc(match)}</span>'
        name = esc(member["microservice"])
        return f"<b>{name}</b>: {esc(', '.join(req) or 'no limits')} → {esc(back)}{flag}"

    def variance_blocks(self) -> list[Block]:
        """variance_components.tsv: each microservice's CV between iterations and between runs,
        the share of the runs, and the repetitions recommended for a +-5 % CI on this host."""
        st = self.data.doc.stats
        v = st.table("pairs", "variance_components", schemas.VARIANCE_COMPONENTS.numeric)
        if not len(v):
            return [md("No variance components were computed (results/stats/pairs/variance_components.tsv).")]
        measured = v[v["df_run"] > 0]
        lead = (
            f"Iterations nest in runs: a run's iterations share its start-up (placement, caches), so only "
            f"repeated runs show how far a rerun moves. Over {plural(len(measured), 'metric')} with repeated "
            f"runs, the median share of the variance between runs is "
            f"{pct(measured['run_share'].median(), 0, sign=False)}; the IRs' intervals cover both levels "
            f"(interference.tsv, column ci_level)."
            if len(measured)
            else "Every cell ran once, so the variance between runs is not measured and every interval "
            "covers the iterations of one run only: a rerun may move further than it says."
        )
        rows = [
            [
                f"{r.target} {r.metric}",
                numi(r.runs),
                num(r.iterations_per_run, 1),
                pct(np.sqrt(r.iteration_var), 1, sign=False) if is_num(r.iteration_var) else "–",
                pct(np.sqrt(r.run_var), 1, sign=False) if is_num(r.run_var) else "–",
                pct(r.run_share, 0, sign=False) if is_num(r.run_share) else "–",
                _side_cv(r.baseline_run_var, r.baseline_df_run),
                _side_cv(r.concurrent_run_var, r.concurrent_df_run),
                f"{numi(r.recommended_runs)} × {numi(r.recommended_iterations)}"
                if is_num(r.recommended_runs)
                else "–",
            ]
            for r in v.itertuples(index=False)
        ]
        return [
            md(esc(lead)),
            self.data.table(
                [
                    "Metric",
                    "Runs",
                    "Iterations per run",
                    "CV between iterations",
                    "CV between runs",
                    "Share between runs",
                    "CV between runs, Case 1",
                    "CV between runs, concurrent",
                    "Runs × iterations for ±5 %",
                ],
                rows,
                "Variance components per microservice and metric, pooled over its cells "
                "(results/stats/pairs/variance_components.tsv), then between runs of each side of an IR "
                "apart, as its interval reads them (– where no cell of that side ran twice); the last "
                "column is Kalibera and Jones's cost-optimal design for a 95 % CI within ±5 % of a "
                "cell's mean on this host.",
                numeric_from=1,
            ),
        ]

    def runs_blocks(self) -> list[Block]:
        if not len(self.data.runs):
            return [md("No run records (results/stats/pairs/runs.tsv) were found.")]
        rows = []
        r = self.data.runs.assign(_c=self.data.runs["case"].map({c: i for i, c in enumerate(CASES)}))
        r = r.sort_values(["host", "runtime", "_c", "pair", "repetition"])
        reps = len(r) and r["repetition"].max() > 1
        # Each run's members in order (run_members.tsv), by the run's identity.
        key = [c for c in RUN_IDENTITY.columns if c in r and c in self.data.members]
        members = {run: m.sort_values("member") for run, m in self.data.members.groupby(key)} if key else {}
        for _, x in r.iterrows():
            if is_num(x.get("window_s")):
                window = f"{num(x['overlap_s'], 1)} of {num(x['window_s'], 0)} s"
            else:
                window = f"{num(x['iterations_requested'], 0)} iterations"
            pair = x["pair"] + self.data.setup_suffix(x["host"], x["runtime"])
            if str(x.get("after_all", "")) == "True":
                pair += " (again, at the end)"
            if reps:
                pair += f" rep {int(x['repetition'])}"
            of_run = members.get(tuple(x[key]), self.data.members.iloc[:0])
            limits = "<br>".join(self.member_limits(m) for _, m in of_run.iterrows())
            rows.append([
                CASE_NAME.get(x["case"], x["case"]), pair, utc(x["started"]).replace(" UTC", ""),
                duration(x["duration_s"]), window, num(x["n_iterations"], 0), num(x["n_in_overlap"], 0),
                num(x["n_failed"], 0), num(x["loadavg_1m_before"], 2), ("html", limits),
            ])  # fmt: skip
        return [
            self.data.table(
                ["Case", "Pair", "Started (UTC)", "Took", "Overlap of window", "Iterations", "In overlap",
                 "Failed", "Load before", "Limits requested → read back in the container"],
                rows,
                "Every run: the overlap (the time both members ran) within its window, iterations, failures, "
                "the 1-minute load average before it, and the cgroup limits each member requested and read back.",
                group_first=True,
                numeric_from=2,
                text_cols=(9,),
                table_class="rpt-table rpt-small rpt-runs",
            )
        ]  # fmt: skip


def _side_cv(run_var, df_run) -> str:
    """One side's CV between runs, "–" where no cell of it ran twice (or a table written before
    the sides were)."""
    return pct(np.sqrt(run_var), 1, sign=False) if is_num(run_var) and is_num(df_run) and df_run > 0 else "–"
