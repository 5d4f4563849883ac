"""The profiling study (issue 35) without containers: its config refused before anything runs,
its run keys read back, each run's settings holding what changes it and nothing else, the
statistics on hand-made samples against hand computation, and a dry run of the CI config."""

import copy
import os
import re
import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE
from interference import studies
from interference.steps.config import ConfigError, validate
from interference.studies.profiling import ProfilingStudy, plan
from interference.studies.profiling.parse import SAMPLE_COLUMNS
from interference.studies.profiling.pressure import CLIPPED, NO_DEGRADATION, invert, pressure, probe_curve
from interference.studies.profiling.statistics import limit_effect, sensitivity

STUDY = studies.get("profiling")
FULL = yaml.safe_load((REPO / "config/profiling.yaml").read_text())


def profiling_cfg(**part) -> dict:
    return validate({"runtimes": ["docker"], "studies": {"profiling": part}}, machine=False)


# -- the config -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "part,needle",
    [
        (
            {"microservices": ["L", "ZZ"]},
            "studies.profiling.microservices[1] has the unknown microservice 'ZZ'",
        ),
        ({"microservices": ["L", "X"]}, "the study's own bubble (X) or probe (Q)"),
        ({"microservices": ["Q"]}, "the study's own bubble (X) or probe (Q)"),
        ({"placements": ["4"]}, "placements"),
        ({"placements": ["3b"], "resources": ["cpu"]}, "it has no cpu bubble"),
        ({"placements": ["3b"], "limits": {"memory": "512m"}}, "limits the bubble's container to 512m"),
        ({"resources": ["gpu"]}, "resources"),
        ({"intensities": {"cpu": [0]}}, "intensities"),
        ({"intensities": {"cpu": [64]}}, "intensities.cpu has 64 cores, but this host has"),
        (
            {"window_s_per_microservice": {"B": 30}, "microservices": ["L"]},
            "window_s_per_microservice has 'B'",
        ),
        ({"sizes": {"X": {"intensity": 3}}}, "sizes"),  # the runs set the bubble's intensity
        ({"sizes": {"Q": {"resource": "cpu"}}}, "sizes"),
        ({"limits": {"memory": "lots"}}, "limits"),
        ({"window_s": 0}, "window_s"),
    ],
)
def test_bad_config_is_refused_with_the_key(part, needle):
    with pytest.raises(ConfigError) as e:
        profiling_cfg(**part)
    assert needle in str(e.value)


def test_defaults_are_the_six_microservices_and_every_resource():
    cfg = profiling_cfg()["studies"]["profiling"]
    assert cfg["microservices"] == ["L", "S", "B", "NS", "NR", "Y"]
    assert cfg["resources"] == ["cpu", "memory", "disk", "network"]
    assert cfg["intensities"]["memory"] == [4, 64, 512] and cfg["placements"] == ["2", "3a"]


@pytest.mark.parametrize("profiles,study", [("profiling", "profiling"), ("cpu-shares", "profiling"),
                                            ("cpu-shares-pairs", "pairs")])  # fmt: skip
def test_profiling_configs_have_the_default_configs_sizes_and_limits(profiles, study):
    """The profiles (and the CPU-share model's own pairs) at the sizes and limits of the default's
    pairs they predict."""
    pairs = yaml.safe_load((REPO / "config/config.yaml").read_text())["studies"]["pairs"]
    mine = yaml.safe_load((REPO / f"config/{profiles}.yaml").read_text())["studies"][study]
    validate(yaml.safe_load((REPO / f"config/{profiles}.yaml").read_text()), machine=False)
    assert mine["limits"] == pairs["limits"]
    assert {m: mine["sizes"][m] for m in mine["microservices"]} == {
        m: pairs["sizes"][m] for m in mine["microservices"]
    }


# -- run keys and settings ---------------------------------------------------------------------
def test_run_keys_read_back():
    cfg = validate(FULL, machine=False)["studies"]["profiling"]
    runs = STUDY.runs(cfg)
    assert len(runs) == len({(r.key, r.repetition) for r in runs}) == 124
    for r in runs:
        assert re.fullmatch(STUDY.key_pattern, r.key)
        assert STUDY.key_of(STUDY.run_of(r.key)) == r.key
    every = plan.runs({**cfg, "placements": ["2", "3a"]})
    assert all(STUDY.run_of(STUDY.key_of(run)) == run for run in every)
    assert STUDY.run_of("2/L/cpu-0.5") == plan.ProfilingRun("2", "L", "cpu", 0.5)
    assert STUDY.run_of("3a/Q/memory+S") == plan.ProfilingRun("3a", "Q", "memory", partner="S")
    assert STUDY.run_of("1u/Q/disk") == plan.ProfilingRun("1u", "Q", "disk")
    assert STUDY.run_of("1/B/alone") == plan.ProfilingRun("1", "B")


def test_images_stack_the_bubble_and_the_probe_in_placement_2():
    cfg = profiling_cfg(microservices=["L", "NS"])["studies"]["profiling"]
    assert STUDY.run_images(cfg, "2/L/cpu-1") == ["L+X"]
    assert STUDY.run_images(cfg, "3a/L/cpu-1") == ["L", "X"]
    assert STUDY.run_images(cfg, "2/Q/disk+NS") == ["NS", "NS+Q"]  # NS's server from its own image
    assert STUDY.run_images(cfg, "2/Q/cpu-1") == ["Q+X"]
    assert {"L+X", "L+Q", "Q+X", "NS+X", "NS+Q", "X", "Q"} <= set(STUDY.images(cfg))


def settings(cfg: dict, key: str) -> dict:
    return STUDY.settings(cfg["studies"]["profiling"], key)


def test_settings_hold_what_changes_the_run():
    base = profiling_cfg(microservices=["L", "S", "B"])
    assert "limits" in settings(base, "1/L/alone") and "limits" not in settings(base, "1u/L/alone")
    beside = settings(base, "3a/L/cpu-0.5")
    assert set(beside) == {
        "case",
        "target",
        "resource",
        "intensity",
        "window_s",
        "iteration_timeout_s",
        "sizes",
    }
    assert set(beside["sizes"]) == {"L", "X"} and beside["sizes"]["X"]["intensity"] == 0.5
    assert set(settings(base, "1u/Q/cpu")["sizes"]["Q"]) == {"resource", "cpu_ops"}

    every = [r.key for r in STUDY.runs(base["studies"]["profiling"])]

    def changed(patch: dict) -> set[str]:
        other = profiling_cfg(
            **{**copy.deepcopy(base["studies"]["profiling"]), **patch, "runtimes": ["docker"]}
        )
        return {k for k in every if settings(base, k) != settings(other, k)}

    def fields(k: str) -> list[str]:
        return k.split("/")

    assert changed({"limits": {"memory": "1g"}}) == {"1/L/alone", "1/S/alone", "1/B/alone"}
    memory_probe = {k for k in every if fields(k)[1] == "Q" and fields(k)[2].startswith("memory")}
    assert changed({"sizes": {"Q": {"memory_ops": 7}}}) == memory_probe
    with_s = {k for k in every if fields(k)[1] == "S" or k.endswith("+S")}
    assert changed({"sizes": {"S": {"ntimes": 3}}}) == with_s
    b_windows = {
        k for k in every if (fields(k)[1] == "B" or k.endswith("+B")) and fields(k)[0] in ("2", "3a")
    }
    assert changed({"window_s_per_microservice": {"B": 30}}) == b_windows


def test_expected_seconds_model():
    cfg = validate(FULL, machine=False)
    s = studies.run_settings(cfg, "profiling", "docker", "3a/L/cpu-0.5", 1)
    # set-up 0.5 + start file 0.5 + window 2 + the bubble's margin and start 1.2 (L's half iteration is less)
    assert STUDY.expected_seconds(s) == pytest.approx(0.5 + 0.5 + 2 + 1.2)
    assert STUDY.fixed_seconds(s) == pytest.approx(0.5 + 2 + 1)
    alone = studies.run_settings(cfg, "profiling", "docker", "1/B/alone", 1)
    assert STUDY.expected_seconds(alone) == pytest.approx(0.5 + 3 * (4.6 + 2048 / 435 + 0.3))


# -- statistics on hand-made samples ----------------------------------------------------------
def samples(rows) -> pd.DataFrame:
    out = []
    for case, target, resource, intensity, partner, rep, metric, higher, values in rows:
        for i, v in enumerate(values, 1):
            out.append(dict(host="h", runtime="docker", case=case, target=target, resource=resource,
                            intensity=intensity, partner=partner, repetition=rep, iteration=i, metric=metric,
                            value=v, unit="u", higher_is_better=higher, in_overlap=True, start=0, end=1,
                            status="ok"))  # fmt: skip
    return pd.DataFrame(out, columns=SAMPLE_COLUMNS)


def table(tmp_path, function, rows, outside=None) -> pd.DataFrame:
    """function's table from these samples; `outside(samples)`: a mask of those that ran (partly)
    outside the window beside their partner."""
    path = tmp_path / "samples.tsv"
    df = samples(rows)
    if outside is not None:
        df.loc[outside(df), "in_overlap"] = False
    df.to_csv(path, sep="\t", index=False)
    return function({"samples": path}, 1)


def test_sensitivity_is_the_relative_change_against_case_1u(tmp_path):
    out = table(tmp_path, sensitivity, [
        ("1u", "L", "", "", "", 1, "gflops", True, [10, 12]),
        ("3a", "L", "cpu", "1", "", 1, "gflops", True, [8, 9]),
        ("1u", "Y", "", "", "", 1, "total_time", False, [1.0, 1.2]),
        ("3a", "Y", "cpu", "1", "", 1, "total_time", False, [1.5, 1.7]),
    ])  # fmt: skip
    at = out.set_index(["microservice", "intensity"])
    assert at.loc[("L", 1.0), "degradation"] == pytest.approx((8.5 - 11) / 11)
    assert at.loc[("Y", 1.0), "degradation"] == pytest.approx((1.1 - 1.6) / 1.1)  # lower is better: (b - x)/b
    assert at.loc[("L", 0.0), "degradation"] == 0 and at.loc[("L", 0.0), "ci_level"] == "baseline"
    row = at.loc[("L", 1.0)]
    assert row.ci_low <= row.degradation <= row.ci_high and row.ci_level == "iterations" and row.runs == 1
    assert list(out.columns[2:11]) == ["microservice", "placement", "resource", "intensity", "metric",
                                       "degradation", "ci_low", "ci_high", "runs"]  # fmt: skip


def test_sensitivity_ci_is_at_the_runs_level_with_repeated_runs(tmp_path):
    out = table(tmp_path, sensitivity, [
        ("1u", "L", "", "", "", 1, "gflops", True, [10, 12]),
        ("1u", "L", "", "", "", 2, "gflops", True, [11, 13]),
        ("2", "L", "memory", "64", "", 1, "gflops", True, [8, 9]),
        ("2", "L", "memory", "64", "", 2, "gflops", True, [9, 10]),
    ])  # fmt: skip
    row = out[out.intensity == 64].iloc[0]
    assert row.degradation == pytest.approx((9 - 11.5) / 11.5) and row.runs == 2
    assert row.ci_level == "runs" and row.ci_low < row.degradation < row.ci_high


def test_limit_effect_is_case_1u_against_case_1(tmp_path):
    out = table(tmp_path, limit_effect, [
        ("1", "L", "", "", "", 1, "gflops", True, [5, 7]),
        ("1u", "L", "", "", "", 1, "gflops", True, [10, 12]),
        ("1", "Y", "", "", "", 1, "total_time", False, [2.0, 2.2]),
        ("1u", "Y", "", "", "", 1, "total_time", False, [1.0, 1.2]),
    ])  # fmt: skip
    effect = out.set_index("microservice")["effect"]
    assert effect["L"] == pytest.approx((11 - 6) / 6)
    assert effect["Y"] == pytest.approx((2.1 - 1.1) / 2.1)
    assert list(out.columns[2:7]) == ["microservice", "metric", "effect", "ci_low", "ci_high"]


def test_invert_reads_the_intensity_off_the_probes_curve():
    xs, curve = [1, 2], [-0.2, -0.5]
    assert invert(xs, curve, -0.35) == (pytest.approx(1.5), "")
    assert invert(xs, curve, -0.1) == (pytest.approx(0.5), "")  # between (0, 0) and the first bubble
    assert invert(xs, curve, 0.05) == (0.0, NO_DEGRADATION)
    assert invert(xs, curve, -0.7) == (2.0, CLIPPED)
    # A rise in the probe's curve is noise: pooled into a flat stretch, then the first point at it.
    assert probe_curve(100, [80, 85]) == pytest.approx([-0.175, -0.175])
    assert invert([1, 2], probe_curve(100, [80, 85]), -0.175)[0] == pytest.approx(1.0)


def test_pressure_from_probe_samples(tmp_path):
    probe = lambda case, partner, intensity, values: (  # noqa: E731
        case,
        "Q",
        "cpu",
        intensity,
        partner,
        1,
        "cpu_rate",
        True,
        values,
    )
    out = table(tmp_path, pressure, [
        probe("1u", "", "", [99, 101]),
        probe("3a", "", "1", [79, 81]),
        probe("3a", "", "2", [49, 51]),
        probe("3a", "L", "", [64, 66]),
        probe("3a", "S", "", [109, 111]),
        probe("3a", "Y", "", [29, 31]),
        ("3a", "L", "cpu", "1", "", 1, "gflops", True, [1, 2]),  # not the probe: not in the fit
    ])  # fmt: skip
    at = out.set_index("microservice")
    assert at.loc["L", "pressure"] == pytest.approx(1.5)
    assert at.loc["L", "ci_low"] <= 1.5 <= at.loc["L", "ci_high"] and at.loc["L", "ci_level"] == "iterations"
    assert at.loc["S", "pressure"] == 0 and at.loc["S", "note"] == NO_DEGRADATION
    assert at.loc["Y", "pressure"] == 2 and at.loc["Y", "note"] == CLIPPED
    assert list(out.columns[2:8]) == [
        "microservice",
        "placement",
        "resource",
        "pressure",
        "ci_low",
        "ci_high",
    ]
    assert np.isfinite(out["pressure"]).all()


# -- the workflow (dry run only: no container starts) ------------------------------------------
def test_dry_run_plans_the_ci_config(tmp_path):
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", "--cores", "1",
         "report/paper.html", "--configfile", str(REPO / "config/profiling-ci.yaml")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout + r.stderr
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", text, re.M))
    assert counts["run"] == counts["parse_run"] == "19"  # 15, the quota sweep's 2 and the busy sweep's 2
    assert counts["statistics_profiling"] == "1" and counts["build_image"] == "10"
    for name in ("sensitivity", "pressure", "limit_effect", "summary", "cpu_speed"):
        assert f"results/stats/profiling/{name}.tsv" in text
    assert "results/raw/" in text and "/profiling/2/Q/cpu+L/rep1/meta.json" in text
    assert (
        "/profiling/1q/S/quota-0.5/rep1/meta.json" in text and "/profiling/1k/S/busy-1/rep1/meta.json" in text
    )
    assert "placement_validation" not in counts  # no pair study: nothing to check the predictions on
    assert not (tmp_path / "results").exists()


def test_with_the_pair_study_the_report_checks_the_predictions_on_its_pairs(tmp_path):
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", "-p", "--cores", "1",
         "report/paper.html", "--configfile", str(REPO / "config/ci.yaml"), str(REPO / "config/profiling-ci.yaml")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout + r.stderr
    assert dict(re.findall(r"^(\w+)\s+(\d+)$", text, re.M))["placement_validation"] == "1"
    assert "interference.steps.placement validate --stats results/stats --host" in text
    assert "--runtime docker" in text and "results/stats/placement/validation.png" in text
    # With a triple of profiled microservices measured: its advice checked for the report too.
    triple = "studies: {pairs: {triples: [L+S+NS, L+S+S], cases: ['1', '2-3a']}, profiling: {microservices: [L, S, NS]}}"
    (tmp_path / "triple.yaml").write_text(triple + "\n")
    r = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", "-p", "--cores", "1",
         "report/paper.html", "--configfile", str(REPO / "config/ci.yaml"), str(REPO / "config/profiling-ci.yaml"),
         str(tmp_path / "triple.yaml")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "placement check --stats results/stats --samples results/parsed/pairs/samples.tsv" in r.stdout
    assert "--services L S NS --cores" in r.stdout and "advice-check-L+S+NS.tsv" in r.stdout
    assert "advice-check-L+S+S" not in r.stdout  # advice is for three different microservices


# -- the runner on a runtime that starts nothing ------------------------------------------------
FIXTURE = {"L": "L/ok", "NS": "NS/ok", "X": "X/ok", "Q": "Q/ok"}


class RecordingRuntime:
    """Records what the runner asks for; a started container's loops 'ran' one iteration each,
    written as microservice-loop writes them (the measured one inside the bubble's span)."""

    def __init__(self, outdir):
        self.outdir, self.started, self.removed, self.networks, self.volumes = outdir, [], [], [], []

    def run_argv(self, spec):
        return ["recorded", spec.name]

    def start(self, spec):
        self.started.append(spec)
        text = spec.command[2] if spec.command[0] == "sh" else " ".join(spec.command)
        for loop in text.split(" & "):
            words = loop.split()
            if "microservice-loop" not in words:
                continue
            i = words.index("microservice-loop")
            ms, folder, first = words[i + 1], words[i + 2].removeprefix("/results/"), int(words[i + 3])
            d = self.outdir / folder
            d.mkdir(parents=True, exist_ok=True)
            start, end = (99.0, 200.0) if ms == "X" else (100.0 + first, 100.5 + first)
            with open(d / "iterations.tsv", "a") as f:
                f.write(f"{first}\t{start}\t{end}\t0\n")
            fixture = FIXTURE[ms] + ("_network" if spec.env.get("PROBE_RESOURCE") == "network" else "")
            for ext in ("out", "err"):
                (d / f"iter{first:04d}.{ext}").write_text(
                    (REPO / "tests/fixtures" / f"{fixture}.{ext}").read_text()
                )

    def wait(self, name, timeout_s):
        return 0

    def logs(self, name):
        return ""

    def remove(self, name):
        self.removed.append(name)

    def create_network(self, name, labels):
        self.networks.append((name, labels))

    def create_volume(self, name, labels):
        self.volumes.append((name, labels))

    def address_of(self, name):
        return "10.0.0.9"


def run_recorded(tmp_path, key: str, **part):
    from interference.core.run_context import RunContext
    from interference.studies.profiling import execute, parse

    cfg = validate({"runtimes": ["docker"], "studies": {"profiling": part}}, machine=False)
    s = {"host": "h", **studies.run_settings(cfg, "profiling", "docker", key, 1)}
    rt = RecordingRuntime(tmp_path)
    images = {
        name: {"ref": name, "id": f"id-{name}"} for name in STUDY.run_images(cfg["studies"]["profiling"], key)
    }
    ctx = RunContext(s, tmp_path, rt, images)
    meta = execute.execute(ctx)
    return rt, ctx, meta, parse.parse({"settings": s, **meta}, tmp_path)


def test_placement_2_runs_both_loops_in_one_unlimited_container(tmp_path):
    rt, ctx, meta, rows = run_recorded(tmp_path, "2/Q/cpu-1", microservices=["L"], window_s=2)
    (spec,) = rt.started
    assert spec.image == "id-Q+X" and spec.command[:2] == ["sh", "-c"] and spec.command[2].endswith("& wait")
    assert spec.limits() == {"cpuset": None, "cpus": None, "memory": None} and spec.labels == ctx.labels
    assert spec.env["PROBE_RESOURCE"] == "cpu" and spec.env["BUBBLE_INTENSITY"] == "1.0"
    assert spec.env["BUBBLE_SECONDS"] == "3"  # the window and the margin
    assert {v for _, v in spec.volumes} == {"/probe-scratch", "/bubble-scratch"}
    assert all(labels == ctx.labels for _, labels in rt.volumes)  # removed with the run's label
    assert meta["n_iterations"] == 1 and meta["n_failed"] == 0
    assert list(rows["metric"]) == ["cpu_rate"] and rows["value"].iloc[0] == pytest.approx(315.48977)
    assert bool(rows["in_overlap"].iloc[0]) and rows["intensity"].iloc[0] == 1.0


def test_placement_3a_runs_two_containers_and_a_server(tmp_path):
    rt, ctx, meta, rows = run_recorded(tmp_path, "3a/Q/network+NS", microservices=["NS"], window_s=2)
    images = [s.image for s in rt.started]
    assert images == ["id-NS", "id-NS", "id-Q"]  # the server, then NS, then the probe
    assert rt.networks and rt.networks[0][1] == ctx.labels
    ns_loop = rt.started[1].command
    assert ns_loop[:2] == ["env", "SERVER_HOST=10.0.0.9"] and "partner-NS" in " ".join(ns_loop)
    assert "SERVER_HOST=10.0.0.9" not in " ".join(rt.started[2].command)
    assert list(rows["metric"]) == ["network_rate"] and rows["partner"].iloc[0] == "NS"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="placement 3b needs two cores")
def test_placement_3b_limits_each_container_to_cores_of_its_own(tmp_path):
    rt, _, meta, rows = run_recorded(
        tmp_path, "3b/Q/memory+L", microservices=["L"], placements=["3b"], resources=["memory"], window_s=2
    )
    partner, probe = rt.started
    cores = sorted(os.sched_getaffinity(0))
    assert (partner.image, probe.image) == ("id-L", "id-Q")
    # As the pair study's Case 3b, cores of their own; the measured probe on the first, as in its
    # limited baseline (1/Q/memory), the partner on the next.
    assert (probe.cpuset, partner.cpuset) == (str(cores[0]), str(cores[1]))
    assert partner.memory == probe.memory == "2g" and partner.cpus is None
    assert list(rows["metric"]) == ["memory_rate"] and rows["case"].iloc[0] == "3b" and meta["n_failed"] == 0


def test_placement_3b_has_no_cpu_bubble_and_its_probe_baseline_is_limited():
    cfg = profiling_cfg(microservices=["L"], resources=["cpu", "memory"], placements=["3a", "3b"])
    keys = {r.key for r in STUDY.runs(cfg["studies"]["profiling"])}
    assert "3a/L/cpu-1" in keys and not any(k.startswith("3b/") and "cpu" in k for k in keys)
    assert {"3b/L/memory-64", "3b/Q/memory+L", "1/Q/memory", "1u/Q/cpu"} <= keys and "1/Q/cpu" not in keys
    s = studies.run_settings(cfg, "profiling", "docker", "3b/L/memory-64", 1)
    assert s["limits"] == cfg["studies"]["profiling"]["limits"]
    assert "limits" not in studies.run_settings(cfg, "profiling", "docker", "3a/L/memory-64", 1)


def test_case_1_runs_each_iteration_in_a_fresh_limited_container(tmp_path):
    rt, ctx, meta, rows = run_recorded(tmp_path, "1/L/alone", microservices=["L"], iterations=2)
    assert [s.image for s in rt.started] == ["id-L", "id-L"] and rt.removed == [s.name for s in rt.started]
    assert all(s.memory == "2g" and s.cpuset is not None for s in rt.started)
    assert meta["n_iterations"] == 2 and list(rows["iteration"]) == [1, 2]
    assert rows["metric"].eq("gflops").all() and rows["status"].eq("ok").all()


def profiles_from(tmp_path, rows, outside=None):
    """The three tables the statistics step writes from these samples, validated against their
    schemas and read back as predict.py reads them."""
    from interference.studies.profiling.profiles import Profiles

    paths = {}
    for name, function in (
        ("sensitivity", sensitivity),
        ("pressure", pressure),
        ("limit_effect", limit_effect),
    ):
        paths[name] = tmp_path / f"{name}.tsv"
        written = table(tmp_path, function, rows, outside)
        ProfilingStudy.tables[name].schema.validate(written, name)  # as the statistics step does
        written.to_csv(paths[name], sep="\t", index=False)
    return Profiles.read(paths["sensitivity"], paths["pressure"], paths["limit_effect"])


def pair_profile_rows() -> list:
    """L and S profiled on CPU in placement 3a, the probe beside bubbles and beside each."""
    rows = [
        ("1", "L", "", "", "", 1, "gflops", True, [9, 11]),
        ("1u", "L", "", "", "", 1, "gflops", True, [10, 12]),
    ]
    rows += [("3a", "L", "cpu", x, "", 1, "gflops", True, v) for x, v in (("1", [8, 9]), ("2", [5, 6]))]
    rows += [
        ("1", "S", "", "", "", 1, "copy", True, [9, 11]),
        ("1u", "S", "", "", "", 1, "copy", True, [9, 11]),
    ]
    rows += [("3a", "S", "cpu", x, "", 1, "copy", True, [10, 10.5]) for x in ("1", "2")]
    rows += [("1u", "Q", "cpu", "", "", 1, "cpu_rate", True, [99, 101])]
    rows += [("3a", "Q", "cpu", x, "", 1, "cpu_rate", True, v) for x, v in (("1", [79, 81]), ("2", [49, 51]))]
    rows += [("3a", "Q", "cpu", "", p, 1, "cpu_rate", True, v) for p, v in (("L", [64, 66]), ("S", [89, 91]))]
    # The other resources: the probe is not slower beside either microservice (pressure 0).
    for r in ("memory", "disk", "network"):
        rows += [("1u", "Q", r, "", "", 1, f"{r}_rate", True, [99, 101])]
        rows += [("3a", "Q", r, "1", "", 1, f"{r}_rate", True, [79, 81])]
        rows += [("3a", "Q", r, "", p, 1, f"{r}_rate", True, [110, 112]) for p in ("L", "S")]
    return rows


def test_the_tables_feed_the_predictor(tmp_path):
    """sensitivity, pressure and limit_effect as written here are what profiles.py reads and
    predict.py turns into a pair's IR."""
    from interference.studies.profiling.predict import predict_group

    profiles = profiles_from(tmp_path, pair_profile_rows())
    assert profiles.pressure_of("S", "3a", "cpu")[0] == pytest.approx(0.5)
    predicted = {r["target"]: r for r in predict_group(profiles, "3a", ["L", "S"])}
    # L beside S's pressure 0.5: half way to L's degradation at 1 core, (8.5 - 11)/11, and the
    # limit's removal, (11 - 10)/10: 1 + IR = 1.1 * (1 - 0.5 * 2.5/11).
    assert predicted["L"]["ir"] == pytest.approx(1.1 * (1 - 0.5 * 2.5 / 11) - 1), predicted["L"]["reason"]
    assert predicted["L"]["ir_low"] <= predicted["L"]["ir"] <= predicted["L"]["ir_high"]
    # Case 3b without placement 3b's profiles: 3a's pressures, no cpu term, no limit effect.
    assert profiles.has_placement("3a") and not profiles.has_placement("3b")
    in_3b = {r["target"]: r for r in predict_group(profiles, "3b", ["L", "S"])}
    assert in_3b["L"]["ir"] == pytest.approx(0.0)


def test_a_microservice_the_probe_has_no_valid_sample_beside_keeps_its_row_and_says_why(tmp_path):
    """The probe beside S in placement 3a made two iterations, neither inside the window (a short
    window beside the unit tests' load did so once): pressure.tsv keeps S's row, empty, with the
    reason, and the prediction of L beside S gives that reason instead of a bare NaN."""
    from interference.studies.profiling.predict import predict_group

    def beside_s_on_cpu(df):
        return (df.target == "Q") & (df.partner == "S") & (df.resource == "cpu")

    rows = pair_profile_rows()
    written = table(tmp_path, pressure, rows, beside_s_on_cpu).set_index(["microservice", "resource"])
    assert np.isnan(written.loc[("S", "cpu"), "pressure"])
    assert (
        written.loc[("S", "cpu"), "note"] == "no valid probe sample beside it: 2 made, 2 outside the window"
    )
    assert written.loc[("L", "cpu"), "pressure"] == pytest.approx(1.5)  # L's row as before
    assert written.loc[("S", "memory"), "pressure"] == 0  # and S's other resources
    profiles = profiles_from(tmp_path, rows, beside_s_on_cpu)
    assert profiles.pressure_of("S", "3a", "cpu") is None
    predicted = {r["target"]: r for r in predict_group(profiles, "3a", ["L", "S"])}
    assert np.isnan(predicted["L"]["ir"])
    assert predicted["L"]["reason"] == (
        "no cpu pressure of S in placement 3a (no valid probe sample beside it: 2 made, 2 outside the window)"
    )
    assert np.isfinite(predicted["S"]["ir"])  # S beside L: L's pressure is known


def test_case_3b_is_predicted_from_placement_3b_against_the_limited_baselines(tmp_path):
    """Placement 3b's curves and pressures are against Case 1 (limited alone), and a Case 3b
    prediction reads them rather than 3a's."""
    from interference.studies.profiling.predict import predict_group

    rows = [
        ("1", "L", "", "", "", 1, "gflops", True, [9, 11]),
        ("1u", "L", "", "", "", 1, "gflops", True, [19, 21]),
    ]
    rows += [
        ("1", "S", "", "", "", 1, "copy", True, [9, 11]),
        ("1u", "S", "", "", "", 1, "copy", True, [9, 11]),
    ]
    for r in ("memory", "disk", "network"):
        rows += [
            ("1u", "Q", r, "", "", 1, f"{r}_rate", True, [199, 201]),
            ("1", "Q", r, "", "", 1, f"{r}_rate", True, [99, 101]),
        ]
        for pl in ("3a", "3b"):
            rows += [
                (pl, m, r, "64", "", 1, metric, True, [7.9, 8.1])
                for m, metric in (("L", "gflops"), ("S", "copy"))
            ]
            rows += [(pl, "Q", r, "64", "", 1, f"{r}_rate", True, [79, 81])]
            # S presses on memory only: in 3b, halfway to the bubble; in 3a not at all (the probe faster).
            beside = [89, 91] if (pl, r) == ("3b", "memory") else [210, 212] if pl == "3a" else [101, 103]
            rows += [(pl, "Q", r, "", p, 1, f"{r}_rate", True, beside) for p in ("L", "S")]
    profiles = profiles_from(tmp_path, rows)
    # The probe limited alone (100) and beside the 3b bubble (80): its 3b curve is -0.2 at 64 MB;
    # beside S -0.1: a pressure of 32 MB (against the unlimited 200 it would have read -0.55).
    assert profiles.pressure_of("S", "3b", "memory")[0] == pytest.approx(32.0)
    assert profiles.has_placement("3b")
    # L's 3b curve against its limited alone (10): (8 - 10)/10 = -0.2 at 64 MB, -0.1 at 32, by hand.
    in_3b = {r["target"]: r for r in predict_group(profiles, "3b", ["L", "S"])}
    assert in_3b["L"]["ir"] == pytest.approx(-0.1), in_3b["L"]["reason"]
    # 3a's tables (S not pressing there) would have predicted 0.
    assert predict_group(profiles, "3a", ["L", "S"])[0]["ir"] == pytest.approx(1.0)  # L's limit effect only


def test_runs_tsv_columns_say_what_was_beside_what():
    cfg = profiling_cfg(microservices=["L"])
    s = studies.run_settings(cfg, "profiling", "docker", "3a/Q/cpu+L", 1)
    assert STUDY.run_row({"settings": s}) == {
        "case": "3a", "target": "Q", "resource": "cpu", "intensity": "", "partner": "L", "window_s": 10,
    }  # fmt: skip


def test_the_sections_profile_table_takes_the_largest_bubble_and_the_worst_metric():
    from interference.studies.profiling.section import profile_table

    sens = pd.DataFrame(
        [("L", "3a", "cpu", 1, "gflops", -0.2), ("L", "3a", "cpu", 2, "gflops", -0.5),
         ("S", "3a", "cpu", 2, "copy", -0.1), ("S", "3a", "cpu", 2, "triad", -0.3),
         ("S", "2", "cpu", 2, "triad", -0.9)],
        columns=["microservice", "placement", "resource", "intensity", "metric", "degradation"],
    )  # fmt: skip
    press = pd.DataFrame(
        [("L", "3a", "cpu", 1.5), ("S", "3a", "cpu", 0.25), ("S", "3a", "memory", 64.0)],
        columns=["microservice", "placement", "resource", "pressure"],
    )
    t = profile_table(sens, press, "3a").set_index("microservice")
    assert t.loc["L", "sensitivity_cpu"] == -0.5 and t.loc["L", "largest_cpu"] == 2  # the largest bubble
    assert t.loc["S", "sensitivity_cpu"] == -0.3  # the worse of S's metrics, not placement 2's
    assert t.loc["L", "pressure_cpu"] == 1.5 and t.loc["S", "pressure_memory"] == 64.0
    assert np.isnan(t.loc["L", "pressure_memory"]) and np.isnan(t.loc["L", "sensitivity_disk"])


def test_a_network_server_runs_on_its_microservices_cores_where_those_are_limited(monkeypatch):
    from types import SimpleNamespace

    from interference.studies.profiling.execute import ProfilingRunner

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})  # whatever the test machine has
    base = profiling_cfg(microservices=["L", "NR"], placements=["3a", "3b"])
    every = [r.key for r in STUDY.runs(base["studies"]["profiling"])]
    with_nr = {k for k in every if "NR" in settings(base, k)["sizes"]}
    limited = {k for k in with_nr if "limits" in settings(base, k)}  # Case 1 and placement 3b
    assert limited and all(settings(base, k)["server_cpus"] == "member" for k in limited)
    # The other runs' settings are unchanged, so they are not made again.
    assert not any("server_cpus" in settings(base, k) for k in set(every) - limited)
    other = profiling_cfg(microservices=["L", "NR"], placements=["3a", "3b"], network_server_cpus="any")
    assert {k for k in every if settings(base, k) != settings(other, k)} == limited

    def server_cores(key: str, cfg=base) -> str | None:
        runner = ProfilingRunner(SimpleNamespace(settings=settings(cfg, key)))
        return runner.server_cpuset("NR", {})

    assert server_cores("1/NR/alone") == "0"  # Case 1: its one core
    assert server_cores("1u/NR/alone") is None and server_cores("1/NR/alone", other) is None
    beside_3b = [k for k in with_nr if k.startswith("3b/")]
    assert beside_3b and set(beside_3b) <= limited
    for key in beside_3b:  # the measured member on the first core, the other on the next
        assert server_cores(key) == ("0" if settings(base, key)["target"] == "NR" else "1"), key
    assert all(server_cores(k) is None for k in with_nr if k.startswith("3a/"))
