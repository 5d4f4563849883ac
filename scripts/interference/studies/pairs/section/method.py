"""The section's method, in sentences: the design that ran (from runs.tsv), the sizes, the limits
and the interval methods; its tables are in method_tables.py."""

from __future__ import annotations

import pandas as pd

from interference.rendering.kit.format import (
    and_list,
    esc,
    numi,
    plural,
    recorded,
)
from interference.studies.pairs.cases import ALONE_CASES, CASES, MIXED, members_of
from interference.studies.pairs.cases import CONCURRENT_CASES as CONCURRENT
from interference.studies.pairs.section.data import CASE_NAME, PairsData
from interference.studies.pairs.section.method_tables import MethodTables, _cases, _sizes


class Method(MethodTables):
    """The method: CEEM steps, microservices and tools, placement cases and limits, runs."""

    def __init__(self, data: PairsData):
        self.data = data

    def tool_version(self, ms_id: str) -> str:
        for img in self.data.env.get("images", []):
            if img.get("image") == ms_id:
                tv = img.get("tool_versions") or {}
                return ", ".join(f"{k} {v}" for k, v in tv.items()) or "–"
        return "–"

    def ran(self) -> pd.DataFrame:
        """The runs of the design as runs.tsv records them, without the baselines re-measured at
        the end (drift check), which are not a level of any factor."""
        r = self.data.runs
        return r[r["after_all"].astype(str) != "True"] if "after_all" in r else r

    def ran_members(self) -> pd.DataFrame:
        """The members of those runs (run_members.tsv), the same runs left out."""
        m = self.data.members
        return m[m["after_all"].astype(str) != "True"]

    def ran_cases(self) -> list[str]:
        r = self.ran()
        return [c for c in CASES if "case" in r and c in set(r["case"])]

    def ran_microservices(self) -> list[str]:
        """Every member of a recorded run, in the section's order (the config's, then the others)."""
        seen = {m for m in self.ran_members()["microservice"] if m}
        return [m for m in self.data.order() if m in seen] + sorted(seen - set(self.data.order()))

    def design_text(self) -> str:
        """The experimental design as it ran (runs.tsv), not as configured: the cases and
        microservices with runs, the pairs run, the iterations each alone run recorded, each
        window and the iteration timeout the runs were given."""
        r = self.ran()
        if not len(r) or "case" not in r:
            return "No run records (results/stats/pairs/runs.tsv): what ran is not known."
        cases = self.ran_cases()
        alone = [c for c in cases if c in ALONE_CASES]
        concurrent = [c for c in cases if c in CONCURRENT]
        ms = self.ran_microservices()
        rank = {m: i for i, m in enumerate(ms)}
        groups = set(r.loc[r["case"].isin(concurrent), "pair"])
        pairs = sorted(
            (p for p in groups if len(members_of(p)) == 2),
            key=lambda p: [rank.get(m, len(rank)) for m in members_of(p)],
        )
        # A triple's runs (each Case 2-3a layout too) are one triple, its members in config order.
        triples = sorted(
            {
                "+".join(sorted(members_of(p), key=lambda m: rank.get(m, len(rank))))
                for p in groups
                if len(members_of(p)) == 3
            }
        )
        every = {tuple(sorted((a, b))) for i, a in enumerate(ms) for b in ms[i:]}
        which = (
            f"in all {plural(len(pairs), 'unordered pair')} (self-pairs included)"
            if {tuple(sorted(members_of(p))) for p in pairs} == every
            else f"in the {plural(len(pairs), 'pair')} {and_list(pairs)}"
        )
        # Iterations: what each alone run recorded (n_iterations, failed ones included), so that
        # adaptive stopping and a changed config show; the config's `iterations` is only asked for.
        iterations = and_list(
            f"{recorded(r.loc[r['case'] == c, 'n_iterations'])} iterations in {CASE_NAME[c]}"
            for c in alone
            if recorded(r.loc[r["case"] == c, "n_iterations"])
        )
        windows = []
        for c in concurrent:
            x = r[r["case"] == c]
            w = recorded(x.get("window_s"), " s")
            if not w:
                continue
            # The adaptive rule may hold a window open: the longest it ran, where longer.
            final = pd.to_numeric(x.get("window_final_s", pd.Series(dtype=float)), errors="coerce")
            held = (
                f", held open to at most {numi(final.max())} s"
                if final.notna().any() and final.max() > pd.to_numeric(x["window_s"], errors="coerce").max()
                else ""
            )
            windows.append(f"{w} in {CASE_NAME[c]}{held}")
        timeout = recorded(r.get("iteration_timeout_s"), " s")
        who = f"{plural(len(ms), 'microservice')} ({', '.join(ms)})"
        alone_in = f"alone in {_cases(alone)}"
        paired_in = f"{which} in {_cases([c for c in concurrent if c != MIXED])}"
        if triples:
            triple_runs = {t for t in groups if len(members_of(t)) == 3}
            with_triples = [c for c in concurrent if set(r.loc[r["case"] == c, "pair"]) & triple_runs]
            paired_in += (
                f", and the {plural(len(triples), 'triple')} {and_list(triples)} in {_cases(with_triples)}"
            )
        parts = [
            _cases(cases),
            f"{who} {alone_in} and {paired_in}"
            if alone and concurrent
            else f"{who} {alone_in if alone else paired_in}",
        ]
        if iterations:
            parts.append(f"{iterations} (a fresh container each)")
        if concurrent:
            parts.append(f"windows of {and_list(windows) or '–'}")
        if servers := self.servers_text():
            parts.append(servers)
        parts.append(self.runs_per_cell())
        parts.append(
            f"an iteration over {timeout} is killed and counted as failed"
            if timeout
            else "an iteration over its timeout (not recorded in runs.tsv) is killed and counted as failed"
        )
        return "; ".join(parts) + "."

    def servers_text(self) -> str:
        """Where the network microservices' servers ran, per case, as run_members.tsv recorded
        it (server_cpuset: the cores given, or 'any'); empty without a server or the column
        (runs from before it)."""
        m = self.ran_members()
        if "server_cpuset" not in m or "case" not in m:
            return ""
        m = m[m["server_cpuset"].fillna("").astype(str) != ""]
        if not len(m):
            return ""
        pinned = set(m.loc[m["server_cpuset"] != "any", "case"])
        free = set(m.loc[m["server_cpuset"] == "any", "case"])
        # A case under both rules (hosts or runs of another version): said once, as such.
        both, pinned, free = pinned & free, pinned - free, free - pinned
        where = [
            f"{text} in {_cases([c for c in CASES if c in cases])}"
            for text, cases in (
                ("on its member's cores", pinned),
                ("on any core", free),
                ("on its member's cores in some runs and on any core in others", both),
            )
            if cases
        ]
        names = [x for x in self.ran_microservices() if x in set(m["microservice"])]
        return f"each network microservice's server ({', '.join(names)}) ran {' and '.join(where)}"

    def runs_per_cell(self) -> str:
        """How many runs each cell had, per case, from what ran (runs.tsv), not from the config."""
        r = self.data.runs
        if not len(r) or "repetition" not in r:
            return "runs per cell unknown (no runs.tsv)"
        per = r[r.get("after_all", "").astype(str) != "True"] if "after_all" in r else r
        counts = (
            per.groupby(["case", "pair"])["repetition"].nunique().groupby(level="case").agg(["min", "max"])
        )
        parts = [
            f"Case {c}: {numi(m['min'])}" + (f"–{numi(m['max'])}" if m["max"] != m["min"] else "")
            for c, m in counts.reindex([c for c in CASES if c in counts.index]).iterrows()
        ]
        return "runs per cell: " + ", ".join(parts)

    def sizes_text(self) -> str:
        """Each microservice's workload size as its runs recorded it (run_members.tsv sizes,
        'n=5000'); several where runs differ (per host: the hosts part says which)."""
        r = self.ran_members()
        seen: dict[str, list[str]] = {}
        for m, size in zip(r["microservice"], r["sizes"]):
            if m and size and size not in seen.setdefault(m, []):
                seen[m].append(size)
        return "; ".join(
            f"{m}: " + " or ".join(_sizes(sz) for sz in sorted(seen[m]))
            for m in self.ran_microservices()
            if seen.get(m)
        )

    def limits_text(self) -> str:
        # The configured limits as a rule (mode, cores, memory): runs.tsv records them per
        # container, and the Cases table beside this shows what each case requested and read back.
        lim = self.data.config.get("limits", {})
        cpu = (
            f"{plural(lim.get('cpus', 0), 'core')} pinned with --cpuset-cpus (disjoint cores in Case 3b)"
            if lim.get("cpu_mode", "?") == "cpuset"
            else f"{lim.get('cpus')} CPUs of quota (--cpus)"
        )
        return f"{cpu} and {esc(lim.get('memory', '?'))} memory (swap off) per limited container"

    def ci_methods(self) -> str:
        out = []
        if "t" in set(self.data.summary.get("ci_method", pd.Series(dtype=str))) - {""}:
            out.append("Student t for means")
        for m in sorted(set(self.data.ir.get("ir_ci_method", pd.Series(dtype=str))) - {""}):
            parts = m.split("_")
            if parts[0] == "bootstrap" and len(parts) == 3:
                kind = parts[1].upper() if parts[1] == "bca" else parts[1]
                out.append(f"{kind} bootstrap with {parts[2]} resamples for IR")
            else:
                out.append(m)
        return "; ".join(out) or "–"
