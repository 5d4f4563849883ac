"""The study and runtime registries and what they declare: every study's run keys match its
wildcard pattern, its tables and settings are well formed, and each runtime's capabilities
decide what a study may run on."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from interference import runtimes, studies
from interference.runtimes import Capabilities
from interference.steps.config import validate
from interference.studies.base import WORKFLOW_TABLES

REPO = Path(__file__).resolve().parent.parent

PAIRS = {"studies": {"pairs": {"microservices": ["L", "S", "NS"], "cases": ["1", "2", "3b"]}}}


def test_registry_finds_the_pair_study():
    assert "pairs" in studies.registry()
    assert studies.get("pairs").name == "pairs"
    # The parse step's code: what parse.py imports of the package, transitively (code_deps).
    root = studies.HERE.parent
    assert [str(p.relative_to(root)) for p in studies.code_files("pairs", "parse")] == [
        "__init__.py",
        "core/groups.py",
        "core/microservices.py",
        "core/records.py",
        "core/samples.py",
        "parsers/__init__.py",
        "studies/pairs/cases.py",
        "studies/pairs/parse.py",
        "studies/pairs/records.py",
    ]


def test_run_keys_match_the_studys_pattern():
    cfg = validate(PAIRS)["studies"]["pairs"]
    study = studies.get("pairs")
    keys = [r.key for r in study.runs(cfg)]
    assert "case1/L" in keys and "case3b/L+NS" in keys and "case2/NS+NS" in keys
    assert len(keys) == 3 + 2 * 6
    for key in keys:
        assert re.fullmatch(study.key_pattern, key), key


def test_settings_and_images_of_one_run():
    cfg = validate(PAIRS)["studies"]["pairs"]
    study = studies.get("pairs")
    s = study.settings(cfg, "case3b/L+NS")
    assert s["case"] == "3b" and s["pair"] == "L+NS" and set(s["sizes"]) == {"L", "NS"}
    assert "window_s" in s and "iterations" not in s
    # Case 2 runs one image holding both; the network server runs from its own image.
    assert study.run_images(cfg, "case2/L+NS") == ["L+NS", "NS"]
    assert study.run_images(cfg, "case1/L") == ["L"]


def test_tables_are_declared_with_their_inputs():
    assert {"summary", "interference", "anova", "posthoc", "runtimes"} <= set(studies.get("pairs").tables)
    for study in studies.registry().values():
        for name, table in study.tables.items():
            # The samples, the study's own tables, or the workflow's run tables (runs.tsv, ...).
            assert set(table.needs) <= {"samples"} | set(study.tables) | WORKFLOW_TABLES, name
            # Each names a function of a module in the study's folder, found when the step runs.
            module, function = table.compute.split(":")
            assert callable(getattr(study.step(module), function)), (study.name, name)


def test_planning_imports_no_statistics_stack():
    """The workflow's DAG needs the registry only: loading it (and the modules the Snakefile
    imports) must not import pandas, scipy or statsmodels, which cost a second per dry run."""
    code = (
        "import sys; sys.path.insert(0, 'scripts');"
        "from interference import runtimes, studies; from interference.core import run_order;"
        "from interference.host import slurm; from interference.steps import estimate, host_setup, transfer;"
        "from interference.steps.config import validate; studies.registry();"
        "heavy = sorted(m for m in ('pandas', 'scipy', 'statsmodels', 'numpy') if m in sys.modules);"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_what_the_pair_study_needs():
    study = studies.get("pairs")
    cfg = validate(PAIRS)["studies"]["pairs"]
    assert study.needs(cfg) == {"networks", "limit:memory", "limit:cpuset"}
    cfg = validate({"studies": {"pairs": {"microservices": ["B"], "cases": ["2", "3a"]}}})["studies"]["pairs"]
    assert study.needs(cfg) == {"volumes"}  # unlimited cases need no limits


def test_capabilities_say_what_is_lacking():
    caps = Capabilities(networks=False, volumes=True, limits=frozenset({"memory"}), image_format="x")
    assert caps.lacks({"networks", "volumes", "limit:memory", "limit:cpuset"}) == ["limit:cpuset", "networks"]
    assert runtimes.ADAPTERS["docker"].capabilities.lacks({"networks", "volumes", "limit:cpus"}) == []


@pytest.mark.parametrize("name", sorted(runtimes.ADAPTERS))
def test_every_adapter_declares_itself(name):
    adapter = runtimes.ADAPTERS[name]
    assert adapter.name == name
    assert isinstance(adapter.capabilities, Capabilities)
    assert adapter.capabilities.limits <= {"cpuset", "cpus", "memory"}
    assert adapter.options_schema["type"] == "object"
    source = adapter.capabilities.image_from
    assert source is None or source in runtimes.ADAPTERS


def test_a_study_table_named_like_the_workflows_own_is_refused():
    """runs.tsv, changes.tsv, ... are written by the workflow's rules beside every study's tables:
    a study declaring one of those names would give two rules one output."""

    class Clashing(studies.get("scaling").__class__):
        name = "clashing"
        tables = {"runs": studies.Table("statistics:runs"), "slowdown": studies.Table("statistics:slowdown")}

    with pytest.raises(ValueError, match=r"clashing.*\['runs'\].*rename them"):
        studies.check_study(Clashing, {}, "test")
    studies.check_study(studies.get("scaling").__class__, {}, "test")  # the shipped ones pass
    with pytest.raises(ValueError, match="defined twice"):
        studies.check_study(Clashing, {"clashing": None}, "test")


def test_the_reserved_names_are_the_files_the_workflow_writes_beside_a_studys_tables():
    """GENERIC_TABLES is kept by hand: it must name what the rules write under results/stats/{study}/
    (the study's own summary, which changes.smk reads, aside)."""
    import re

    from conftest import REPO
    from interference.studies.base import GENERIC_TABLES

    text = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    written = set(re.findall(r"results/stats/\{study\}/(\w+)\.tsv", text)) - {"summary"}
    assert written == GENERIC_TABLES
