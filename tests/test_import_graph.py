"""The package's import graph, read from the source (every import statement, also inside
functions and under TYPE_CHECKING): no circle, and no study kind importing another study kind
(what they share lives beneath them: descriptive, resampling, report, findings.verdict)."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO
from interference.core import code_deps

PACKAGE = REPO / "scripts" / "interference"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (code_deps reads the source, the workflow's
    code inputs use the same reading)."""
    return {name: {module_name(f) for f in code_deps.imported_by(path)} for name, path in modules().items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def study_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "studies" and parts[2] != "base" else None


def test_the_graph_reader_sees_imports_and_circles():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]
    g = graph()
    assert "interference.stats.run_level" in g["interference.studies.network.statistics"]
    assert "interference.studies.pairs.cases" in g["interference.studies.pairs.execute"]


def test_no_import_circle():
    assert cycles(graph()) == []


def test_no_study_imports_another():
    crossing = [
        (m, i)
        for m, deps in graph().items()
        for i in deps
        if study_of(m) and study_of(i) and study_of(m) != study_of(i)
    ]
    assert crossing == []


def test_each_steps_code_inputs_are_its_import_closure():
    """A rule's code inputs: what the step imports, transitively, and nothing unrelated."""
    from interference import studies

    def names(study, step):
        return {str(p.relative_to(PACKAGE)) for p in studies.code_files(study, step)}

    # Shared modules reach every study's statistics that imports them ...
    for study in ("network", "pingpong", "scaling"):
        assert {"stats/resampling.py", "stats/descriptive.py", f"studies/{study}/statistics.py"} <= names(
            study, "statistics"
        )
    # ... including through another module (drift.py and published.py import cases.py) ...
    assert {"studies/pairs/cases.py", "studies/pairs/statistics/drift.py", "stats/resampling.py"} <= names(
        "pairs", "statistics"
    )
    # ... and nothing the step does not import: no runner, runtime or report code in statistics.
    stats = names("pairs", "statistics")
    assert not any(n.startswith(("runtimes/", "rendering/", "studies/pairs/execute")) for n in stats), stats
    assert "steps/runner.py" not in names("pairs", "parse")
    # The closure of one file by hand: verdict.py imports inference.py, which imports no module
    # of ours (both light: the Snakefile plans with them); power.py adds claims.py and verdict's.
    verdict = PACKAGE / "findings" / "verdict.py"
    assert code_deps.closure([verdict]) == sorted([verdict, PACKAGE / "findings" / "inference.py"])
    power = PACKAGE / "findings" / "power.py"
    assert code_deps.closure([power]) == sorted(
        [power, verdict, PACKAGE / "findings" / "inference.py", PACKAGE / "findings" / "claims.py"]
    )


def test_every_module_of_the_package_imports():
    """A name moved between modules is found here, not in the middle of a pipeline's step."""
    import importlib
    import pkgutil

    import interference

    failed = {}
    for module in pkgutil.walk_packages(interference.__path__, "interference."):
        try:
            importlib.import_module(module.name)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its module
            failed[module.name] = repr(e)
    assert failed == {}


def test_what_the_snakefile_imports_leaves_out_the_heavy_statistics_libraries():
    # Every snakemake start (a test's, a Slurm job's, a user's) pays what the workflow imports:
    # scipy.stats, statsmodels and matplotlib cost about a second each and only rules use them.
    # The workflow's own import statements (one-line or parenthesised), read from its files.
    import re
    import subprocess
    import sys

    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    pattern = re.compile(r"^(?:from interference\S* import (?:\([^)]*\)|.*)|import interference.*)$", re.M)
    imports = [m for path in sources for m in pattern.findall(path.read_text())]
    assert any("steps" in i and "plan" in i for i in imports), imports  # the planning code is among them
    code = "\n".join(["import sys", *imports, "from interference import studies", "studies.registry()",
                      "print(sorted(m for m in ('scipy.stats', 'statsmodels', 'matplotlib') if m in sys.modules))"])  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
