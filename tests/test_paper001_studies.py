"""Paper 001's study kinds, scaling (CPU scaling, its Fig. 3) and creation (creation time, Fig. 4
and Table I): their run keys, settings, refusals before anything runs, the sysbench parser, and
their statistics on hand-made samples."""

import re

import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from interference import studies
from interference.core.entity_memory import GIB, check_memory
from interference.findings import verdict as rule
from interference.parsers import ParseError, get
from interference.steps.config import ConfigError, validate
from interference.studies.creation.statistics import table1
from interference.studies.scaling.statistics import slowdown, summary

PUBLISHED = REPO / "report/published"

SYSBENCH = """Prime numbers limit: 40000
CPU speed:
    events per second:   426.97
General statistics:
    total time:                          2.3410s
    total number of events:              1000
Threads fairness:
    events (avg/stddev):           1000.0000/0.00
    execution time (avg/stddev):   2.3374/0.00
"""


def config(**studies_part) -> dict:
    return {"runtimes": ["docker"], "studies": studies_part}


def test_sysbench_parser():
    assert get("sysbench")(SYSBENCH, "") == {"execution_time": 2.3374}
    with pytest.raises(ParseError, match="truncated"):
        get("sysbench")(SYSBENCH.split("General")[0], "")
    with pytest.raises(ParseError, match="empty"):
        get("sysbench")("", "")


def test_scaling_runs_and_settings():
    cfg = validate(config(scaling={"instances": [4, 1, 2], "repetitions": 2}))["studies"]["scaling"]
    study = studies.get("scaling")
    keys = [(r.key, r.repetition) for r in study.runs(cfg)]
    assert keys[:2] == [("n1", 1), ("n1", 2)] and len(keys) == 6
    assert all(re.fullmatch(study.key_pattern, k) for k, _ in keys)
    assert study.settings(cfg, "n4") == {"instances": 4, "iterations": 3, "iteration_timeout_s": 300,
                                         "max_prime": 40000, "events": 1000}  # fmt: skip
    assert study.run_images(cfg, "n4") == ["P"]


def test_creation_variants_only_on_nested():
    cfg = {"runtimes": ["docker", "nested"], "studies": {"creation": {"entities": [1, 2], "repetitions": 1,
           "nested_child_image": ["load", "preloaded"]}}}  # fmt: skip
    cfg = validate(cfg)["studies"]["creation"]
    study = studies.get("creation")
    assert [r.key for r in study.runs_on(cfg, "docker")] == ["n1/c1", "n2/c1"]
    assert [r.key for r in study.runs_on(cfg, "nested")] == ["n1/c1/load", "n1/c1/preloaded", "n2/c1/load",
                                                             "n2/c1/preloaded"]  # fmt: skip
    assert study.settings(cfg, "n2/c1/preloaded") == {"entities": 2, "children": 1, "timeout_s": 600,
                                                       "child_image": "preloaded"}  # fmt: skip


def test_only_nested_parents_have_several_children():
    cfg = {"runtimes": ["docker", "nested"], "studies": {"creation": {"entities": [2], "children": [1, 2],
           "repetitions": 1}}}  # fmt: skip
    cfg = validate(cfg)["studies"]["creation"]
    assert [r.key for r in studies.get("creation").runs_on(cfg, "docker")] == ["n2/c1"]
    assert [r.key for r in studies.get("creation").runs_on(cfg, "nested")] == ["n2/c1/load", "n2/c2/load"]


def test_parents_times_children_are_bounded_by_the_total():
    cfg = {"runtimes": ["nested"], "studies": {"creation": {"entities": [1, 4], "children": [1, 4],
           "max_children": 4, "repetitions": 1}}}  # fmt: skip
    keys = [r.key for r in studies.get("creation").runs_on(validate(cfg)["studies"]["creation"], "nested")]
    assert keys == ["n1/c1/load", "n1/c4/load", "n4/c1/load"]


@pytest.mark.parametrize(
    ("cfg", "needles"),
    [
        (
            {"runtimes": ["baremetal"], "studies": {"creation": {}}},
            ["bare metal (baremetal) creates no entity"],
        ),
        (
            {"runtimes": ["docker"], "studies": {"creation": {"children": [1, 8]}}},
            ["8 children", "nested runtime"],
        ),
        ({"runtimes": ["vm"], "studies": {"scaling": {"instances": [1, 1000]}}}, ["N=1000 on vm", "GiB"]),
        ({"runtimes": ["docker"], "studies": {"scaling": {"instances": [0]}}}, ["instances", "0"]),
    ],
)
def test_what_cannot_run_is_refused_before_anything_runs(cfg, needles):
    with pytest.raises(ConfigError) as e:
        validate(cfg)
    for needle in needles:
        assert needle in str(e.value)


def test_memory_bound_names_n_and_runtime():
    check_memory(["docker"], 64, total=24 * GIB)
    with pytest.raises(ValueError, match="N=16 on vm needs about 32.0 GiB"):
        check_memory(["docker", "vm"], 16, total=24 * GIB)


def samples(rows) -> pd.DataFrame:
    base = {"host": "h", "repetition": 1, "metric": "execution_time", "unit": "s", "higher_is_better": False,
            "status": "ok", "instance": 1, "iteration": 1, "start": 0, "end": 1}  # fmt: skip
    return pd.DataFrame([{**base, **r} for r in rows])


def test_slowdown_is_relative_to_one_bare_metal_instance(tmp_path):
    rows = [{"runtime": "baremetal", "instances": 1, "value": v} for v in (1.0, 1.1, 0.9)]
    rows += [{"runtime": "baremetal", "instances": 4, "value": v} for v in (2.0, 2.2, 1.8)]
    rows += [{"runtime": "docker", "instances": 1, "value": v} for v in (1.05, 1.15, 0.95)]
    path = tmp_path / "samples.tsv"
    samples(rows).to_csv(path, sep="\t", index=False)
    s = summary({"samples": path}, 1)
    assert list(s["instances"]) == [1, 4, 1] and s["mean"].round(3).tolist() == [1.0, 2.0, 1.05]
    d = slowdown({"samples": path}, 1).set_index(["runtime", "instances"])
    assert d.loc[("baremetal", 4), "slowdown"] == pytest.approx(2.0)
    assert d.loc[("docker", 1), "slowdown"] == pytest.approx(1.05)
    assert (d["reference"] == "baremetal, N=1").all()
    assert d.loc[("baremetal", 4), "ci_low"] < 2.0 < d.loc[("baremetal", 4), "ci_high"]


def test_table1_puts_the_published_value_beside_ours(tmp_path):
    rows = [
        {"host": "h", "runtime": "nested", "variant": "load", "entities": 2, "children": 1,
         "metric": "created_to_exit", "n": 2, "mean": 12.0, "sd": 0.5},
        {"host": "h", "runtime": "docker", "variant": "", "entities": 2, "children": 1,
         "metric": "created_to_exit", "n": 2, "mean": 1.0, "sd": 0.1},
    ]  # fmt: skip
    path = tmp_path / "summary.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    t = table1({"summary": path}, 1)
    assert len(t) == 1
    assert (t.iloc[0]["parents"], t.iloc[0]["children"], t.iloc[0]["published_mean_s"]) == (2, 1, 15)


def test_table1_of_one_sample_has_no_sd_and_passes_its_schema(tmp_path):
    """One parent, one repetition (config/paper001-ci.yaml): the summary's SD is empty, which the
    table carries as a missing number (it once failed the schema: make actions found it)."""
    from interference.studies.creation import TABLE1

    rows = [{"host": "h", "runtime": "nested", "variant": "load", "entities": 1, "children": 1,
             "metric": "created_to_exit", "n": 1, "mean": 3.0, "sd": ""}]  # fmt: skip
    path = tmp_path / "summary.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    t = table1({"summary": path}, 1)
    assert t.iloc[0]["mean_s"] == 3.0 and pd.isna(t.iloc[0]["sd_s"])
    TABLE1.validate(t, "creation/table1")


@pytest.mark.parametrize("name", ["paper001", "paper001-ci"])
def test_shipped_paper001_configs_are_valid(name):
    from conftest import REPO
    from interference.steps.config import load

    cfg = load(REPO / "config" / f"{name}.yaml")
    assert set(cfg["studies"]) == {"scaling", "creation", "network"}


def test_the_published_protocol_is_refused_on_a_small_machine_and_fits_a_large_one(monkeypatch):
    from conftest import REPO
    from interference.steps.config import read_yaml

    cfg = read_yaml(REPO / "config" / "paper001-protocol.yaml")
    monkeypatch.setattr("interference.core.entity_memory.machine_memory", lambda: 24 * GIB)
    with pytest.raises(ConfigError, match="N=64 on nested"):
        validate(cfg)
    monkeypatch.setattr("interference.core.entity_memory.machine_memory", lambda: 256 * GIB)
    assert validate(cfg)["studies"]["scaling"]["instances"][-1] == 64


PVM = "tcg (the host's KVM is PVM (kvm_pvm), which boots only PVM guest kernels)"


@pytest.mark.parametrize(
    ("env", "accel"),
    [
        ({"engines": {"vm": {"engine": "QEMU (TCG)", "details": {"acceleration": PVM}}}},
         ("tcg", "the host's KVM is PVM (kvm_pvm), which boots only PVM guest kernels")),
        ({"engines": {"vm": {"details": [{"acceleration": "tcg (no usable /dev/kvm)"}, {}]}}},
         ("tcg", "no usable /dev/kvm")),
        ({"engines": {"vm": {"engine": "QEMU (KVM)", "details": {"acceleration": "kvm (/dev/kvm)"}}}},
         ("kvm", "/dev/kvm")),
        ({"engines": {"vm": {"engine": "QEMU (TCG)"}}}, ("tcg", "")),
        ({"engines": {"docker": {"engine": "docker"}}}, None),
        ({"engines": {"vm": {"engine": "QEMU"}}}, None),
    ],
)  # fmt: skip
def test_vm_acceleration_as_recorded(env, accel):
    from interference.stores.stats_tables import vm_acceleration

    assert vm_acceleration(env) == accel


def test_vm_emulation_sentences_follow_the_recorded_acceleration():
    from interference.studies.creation.section import vm_note
    from interference.studies.scaling.section import vm_lines

    pvm = {"engines": {"vm": {"details": {"acceleration": PVM}}}}
    no_dev = {"engines": {"vm": {"details": {"acceleration": "tcg (no usable /dev/kvm)"}}}}
    kvm = {"engines": {"vm": {"details": {"acceleration": "kvm (/dev/kvm)"}}}}
    assert "PVM" in vm_note(pvm) and "PVM" in vm_lines(pvm)[0]
    assert "no usable /dev/kvm" in vm_note(no_dev) and "PVM" not in vm_note(no_dev)
    assert "because no usable /dev/kvm" in vm_lines(no_dev)[0] and "PVM" not in vm_lines(no_dev)[0]
    assert vm_note(kvm) == "" and vm_lines(kvm) == []
    assert vm_note({}) == "" and vm_lines({}) == []


def _scaling_stats(tmp_path, docker_factor: float, n: int, per_run: int = 2):
    """results/stats/ of the scaling study from synthetic samples: bare metal's and Docker's
    sysbench times at N = 1 and 2, Docker's `docker_factor` × bare metal's, n samples each in
    runs of per_run (0: one run)."""
    from interference.steps.statistics import write

    rng = np.random.default_rng(3)
    rows = [
        {"host": "h", "runtime": rt, "instances": k, "repetition": i // per_run + 1 if per_run else 1,
         "instance": 1, "iteration": i + 1,
         "metric": "execution_time", "value": 10.0 * k * f * (1 + 0.005 * rng.standard_normal()), "unit": "s",
         "higher_is_better": False, "start": "", "end": "", "status": "ok"}
        for rt, f in (("baremetal", 1.0), ("docker", docker_factor)) for k in (1, 2) for i in range(n)
    ]  # fmt: skip
    out = tmp_path / "stats"
    samples = out / "samples.tsv"
    write(pd.DataFrame(rows), samples)
    write(summary({"samples": samples}, 1), out / "scaling/summary.tsv")
    write(slowdown({"samples": samples}, 1), out / "scaling/slowdown.tsv")
    (out / "environment.json").write_text("{}")
    return out


@pytest.mark.parametrize(("factor", "n", "per_run", "verdict"),
                         [(1.0, 10, 2, rule.REPRODUCED), (1.2, 10, 2, rule.NOT_REPRODUCED),
                          (1.0, 2, 1, rule.INCONCLUSIVE), (1.2, 10, 0, rule.INCONCLUSIVE)])  # fmt: skip
def test_the_scaling_section_shows_the_scorecards_verdict_on_its_data(tmp_path, factor, n, per_run, verdict):
    """001-1 (a container as fast as bare metal) scored by the findings step on the study's own
    tables, and the section showing that row: no second judge. One run's iterations decide
    nothing (the last case), however far from the claim."""
    from interference.rendering.document import Document
    from interference.rendering.findings_section import study_blocks
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write

    stats = _scaling_stats(tmp_path, factor, n, per_run)
    entry = [e for e in sc.load_catalogue(PUBLISHED / "findings.yaml") if e["id"] == "001-1"]
    card = sc.scorecard(entry, stats, ["scaling"], PUBLISHED)
    assert card["verdict"].tolist() == [verdict], card.to_dict("records")
    write(card, stats / "findings.tsv")
    (block,) = study_blocks(Document(stats, PUBLISHED, "test", "scaling"), "scaling")
    assert "**001-1**" in block.content and f"*{verdict}*" in block.content, block.content
    # The method and figure say what the intervals cover, from the table.
    from interference.studies.scaling.section import section

    text = "\n".join(b.content for b in section(Document(stats, PUBLISHED, "test", "scaling")).method())
    said = (
        "95 % interval over runs" if per_run else "95 % interval from a bootstrap over one run's iterations"
    )
    assert said in text, text


def test_the_methods_state_the_n_and_counts_the_runs_recorded_not_the_config(tmp_path):
    """Scaling and creation say which N ran and how often from their runs.tsv; a config saying
    otherwise (environment.json) changes nothing."""
    import json

    from interference.rendering.document import Document
    from interference.studies.creation.section import Creation
    from interference.studies.scaling.section import Scaling

    stats = tmp_path / "stats"
    (stats / "scaling").mkdir(parents=True)
    (stats / "creation").mkdir()
    config = {"studies": {"scaling": {"instances": [1, 2, 32], "iterations": 99, "max_prime": 100, "events": 5},
                          "creation": {"entities": [7], "repetitions": 42}}}  # fmt: skip
    (stats / "environment.json").write_text(json.dumps({"config": config}))
    scaling = pd.DataFrame({"host": "h", "runtime": "docker", "study": "scaling", "key": ["n1", "n2", "n2"],
                            "repetition": [1, 1, 2], "instances": [1, 2, 2], "n_iterations": [3, 6, 6]})  # fmt: skip
    scaling.to_csv(stats / "scaling/runs.tsv", sep="\t", index=False)
    creation = pd.DataFrame({"host": "h", "runtime": "docker", "study": "creation", "key": ["n1", "n4", "n4"],
                             "repetition": [1, 1, 2], "entities": [1, 4, 4], "children": 1, "variant": ""})  # fmt: skip
    creation.to_csv(stats / "creation/runs.tsv", sep="\t", index=False)
    # The section reads its summary too (no rows here).
    pd.DataFrame(columns=["runtime", "variant", "entities", "children", "metric", "mean"]).to_csv(
        stats / "creation/summary.tsv", sep="\t", index=False
    )

    def said(section):
        return section(Document(stats, None, "test", "scaling,creation")).method()[0].content

    text = said(Scaling)
    assert "N in 1, 2, each instance run 3 times per run" in text and "32" not in text and "99" not in text
    assert "primes up to 100, 5 events" in text  # the workload: runs.tsv does not record it
    assert "N in 1, 4, 1–2 runs of each setting" in said(Creation) and "42" not in said(Creation)
    scaling.assign(n_iterations=[3, 6, 8]).to_csv(stats / "scaling/runs.tsv", sep="\t", index=False)
    assert "each instance run 3–4 times per run" in said(Scaling)
    (stats / "scaling/runs.tsv").unlink()
    assert "N in –, each instance run an unrecorded number of times" in said(Scaling)


@pytest.mark.parametrize(
    ("runs", "level", "verdict"), [(5, "runs", rule.REPRODUCED), (0, "iterations", rule.INCONCLUSIVE)]
)
def test_parents_over_children_is_judged_over_runs_not_entities(tmp_path, runs, level, verdict):
    """001-7 (2 parents of one child take longer than 1 parent of 2 children): the 2 entities of
    one run share it, so each side's n is its runs (runs.tsv), not its entities; without a run
    count the ratio decides nothing."""
    from interference.steps import scorecard as sc
    from interference.steps.statistics import write
    from interference.studies.creation.statistics import summary as creation_summary

    rng = np.random.default_rng(7)
    rows = [
        {"host": "h", "runtime": "nested", "variant": "load", "entities": e, "children": c, "repetition": r,
         "entity": i + 1, "metric": "created_to_exit", "value": t * (1 + 0.03 * rng.standard_normal()),
         "unit": "s", "higher_is_better": False, "status": "ok"}
        for e, c, t in ((2, 1, 17.0), (1, 2, 10.0)) for r in range(1, 6) for i in range(e)
    ]  # fmt: skip
    stats = tmp_path / "stats"
    write(pd.DataFrame(rows), stats / "samples.tsv")
    write(creation_summary({"samples": stats / "samples.tsv"}, 1), stats / "creation/summary.tsv")
    run_rows = [{"host": "h", "runtime": "nested", "study": "creation", "key": f"n{e}/c{c}", "repetition": r,
                 "entities": e, "children": c, "variant": "load"}
                for e, c in ((2, 1), (1, 2)) for r in range(1, runs + 1)]  # fmt: skip
    pd.DataFrame(run_rows or [{"host": "h"}]).to_csv(stats / "creation/runs.tsv", sep="\t", index=False)
    (stats / "environment.json").write_text("{}")
    entry = [e for e in sc.load_catalogue(PUBLISHED / "findings.yaml") if e["id"] == "001-7"]
    card = sc.scorecard(entry, stats, ["creation"], PUBLISHED)
    assert card[["verdict", "level"]].values.tolist() == [[verdict, level]], card.to_dict("records")
    if runs:
        assert int(card["n"].iloc[0]) == runs and "over runs" in card["what"].iloc[0]
