"""Moving another host's results in (interference.steps.transfer): an export verified file by file
against its sha256 manifest, refused when partial, corrupt, of this very host, already present
or run under another definition of its study — with nothing in results/ changed —, and, for
real, two hosts' runs of one config in one set of statistics and one report, the imported runs
never rerun."""

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, SNAKEMAKE, nothing_left, requires_engine, run_report
from interference.steps.config import ConfigError, validate
from interference.steps.transfer import TransferError, expected_settings, export, import_results
from interference.stores import tarballs

PART = {"runtimes": ["baremetal"], "layers": ["loopback", "reference"], "message_sizes": [10], "duration_s": 1,
        "iterations": 2}  # fmt: skip


def config(host: str, **part) -> dict:
    return {"host": host, "runtimes": ["baremetal"], "studies": {"pingpong": PART | part}}


def fake_results(results: Path, host: str) -> None:
    """Two finished runs of `host` as its runner leaves them (meta.json with its settings, raw files)."""
    cfg = validate(config(host))
    for layer in ("loopback", "reference"):
        run = results / "raw" / host / "baremetal" / "pingpong" / layer / "rep1"
        (run / "tests").mkdir(parents=True)
        settings = expected_settings(cfg, "pingpong", "baremetal", layer, 1) | {"host": host}
        (run / "meta.json").write_text(json.dumps({"settings": settings, "tests": []}))
        (run / "tests" / "i0001-m10.out").write_text(f"ab output of {layer}\n")


@pytest.fixture
def exported(tmp_path) -> Path:
    fake_results(tmp_path / "edge-results", "edge")
    return export(tmp_path / "edge-results", "edge", tmp_path / "edge.tar.gz")


def unpacked(tarball: Path, where: Path) -> Path:
    with tarfile.open(tarball) as tar:
        tarballs.extract(tar, where)
    return where / "edge"


def test_an_export_is_imported_once_with_its_manifest(tmp_path, exported):
    results = tmp_path / "results"
    record = import_results(exported, results, config("fog"))
    assert sorted(r["key"] for r in record["runs"]) == ["loopback", "reference"]
    assert (
        results / "raw/edge/baremetal/pingpong/reference/rep1/tests/i0001-m10.out"
    ).read_text() == "ab output of reference\n"
    assert not (results / "raw/edge/MANIFEST.json").exists()
    manifest = json.loads((results / "imported/edge.manifest.json").read_text())
    assert len(manifest["files"]) == 4 and json.loads((results / "imported/edge.json").read_text()) == record
    with pytest.raises(TransferError, match="exists already"):
        import_results(exported, results, config("fog"))
    assert not list(results.glob(".import-*"))  # no temporary folder left


def changed_nothing(results: Path) -> bool:
    return not (results / "raw" / "edge").exists() and not (results / "imported").exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "baremetal/pingpong/reference/rep1/tests/i0001-m10.out").write_text("edited\n"),
         "corrupt import of edge: baremetal/pingpong/reference/rep1/tests/i0001-m10.out"),
        (lambda root: (root / "baremetal/pingpong/loopback/rep1/meta.json").unlink(), "partial import of edge: 1 listed"),
        (lambda root: (root / "baremetal/stray.txt").write_text("x"), "1 files not in its manifest"),
        (lambda root: (root / "MANIFEST.json").write_text("{"), "no readable MANIFEST.json"),
    ],
)  # fmt: skip
def test_a_damaged_export_is_refused_and_nothing_changes(tmp_path, exported, damage, message):
    root = unpacked(exported, tmp_path / "copy")
    damage(root)
    results = tmp_path / "results"
    with pytest.raises(TransferError, match=message):
        import_results(root, results, config("fog"))
    assert changed_nothing(results)


def test_a_host_is_checked_against_its_own_protocol(tmp_path, exported):
    """hosts.edge overrides edge's duration: edge's runs (1 s) match only when the config says so."""
    fog_cfg = config("fog", duration_s=2) | {"hosts": {"edge": {"studies": {"pingpong": {"duration_s": 1}}}}}
    assert validate(fog_cfg)["studies"]["pingpong"]["duration_s"] == 2
    assert validate(fog_cfg | {"host": "edge"})["studies"]["pingpong"]["duration_s"] == 1
    record = import_results(exported, tmp_path / "results", fog_cfg)
    assert len(record["runs"]) == 2


def test_a_bad_host_override_is_refused_before_anything_runs():
    with pytest.raises(
        ConfigError, match=r"hosts.edge.studies.pairs overrides a study the config does not run"
    ):
        validate(config("fog") | {"hosts": {"edge": {"studies": {"pairs": {"iterations": 3}}}}})
    with pytest.raises(ConfigError, match=r"as host edge.*studies.pingpong.*duration_s"):
        validate(config("fog") | {"hosts": {"edge": {"studies": {"pingpong": {"duration_s": 0}}}}})


def test_another_definition_of_the_study_is_refused(tmp_path, exported):
    results = tmp_path / "results"
    with pytest.raises(
        TransferError, match=r"a different definition of study pingpong \(duration_s: ran 1, this config 2\)"
    ):
        import_results(exported, results, config("fog", duration_s=2))
    with pytest.raises(TransferError, match="this config has no run pingpong baremetal loopback"):
        import_results(exported, results, config("fog", layers=["reference"]))
    with pytest.raises(TransferError, match="this config's own host"):
        import_results(exported, results, config("edge"))
    with pytest.raises(TransferError, match="not a readable tarball"):
        import_results(tmp_path / "missing.tar.gz", results, config("fog"))
    assert changed_nothing(results)


@pytest.mark.integration
@requires_engine
def test_two_hosts_in_one_report(tmp_path):
    """Host `edge` runs the config and exports; host `fog` runs it, imports edge and reports both."""
    tiny = {"runtimes": ["baremetal"], "studies": {"pingpong": PART | {"layers": ["loopback"]}}}
    edge, fog = tmp_path / "edge", tmp_path / "fog"
    edge.mkdir(), fog.mkdir()
    run_report(edge, tiny | {"host": "edge"}, target="raw")  # the runs only: no report there
    export(edge / "results", "edge", tmp_path / "edge.tar.gz")
    run_report(fog, tiny | {"host": "fog"}, target="raw")
    shutil.copy(fog / "tiny.yaml", tmp_path / "fog.yaml")
    r = subprocess.run(
        [str(Path(SNAKEMAKE).parent / "python"), "-m", "interference.steps.transfer", "import", str(tmp_path / "edge.tar.gz"),
         "--config", str(tmp_path / "fog.yaml")],
        cwd=fog, env={"PYTHONPATH": str(REPO / "scripts"), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0 and "imported 1 runs of edge" in r.stdout, r.stderr
    dry = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(fog), "-n", "report/paper.html", "--configfile",
         str(fog / "tiny.yaml")], capture_output=True, text=True,
    )  # fmt: skip
    assert (
        "rule run:" not in dry.stdout
        and "results/parsed/edge/baremetal/pingpong/loopback/rep1.tsv" in dry.stdout
    )
    run_report(fog, tiny | {"host": "fog"})
    s = pd.read_csv(fog / "results/stats/pingpong/summary.tsv", sep="\t")
    assert set(s["host"]) == {"edge", "fog"}
    assert (s[s["metric"] == "transfer_rate"].groupby("host")["n"].sum() == 2).all()
    env = json.loads((fog / "results/stats/environment.json").read_text())
    assert set(env["hosts"]) == {"edge", "fog"}  # both machines described in the report
    assert nothing_left() == []
