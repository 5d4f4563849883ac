# Shared helpers: the validated config, the run matrix of every study and the input functions.
# Everything particular to a study comes from its module (scripts/interference/studies/),
# everything particular to a runtime from its adapter (scripts/interference/runtimes/).
import functools
import json
import os
import re
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod

SCRIPTS = os.path.join(workflow.basedir, "scripts")
sys.path.insert(0, SCRIPTS)

# Python steps import scripts/interference. Without --sdm conda they run on the Python that
# runs snakemake (the project's venv); with it, on the rule's conda env.
_prefix = f"set -euo pipefail; export PYTHONPATH={SCRIPTS}; "
if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
    _prefix += f"export PATH={os.path.dirname(sys.executable)}:$PATH; "
shell.prefix(_prefix)

from interference import (
    code_deps,
    estimate,
    host_setup,
    run_order,
    runtimes,
    slurm,
    studies,
    transfer,
)
from interference.config import ConfigError, read_yaml, validate
from interference.microservices import registry

# The default experiment, unless --configfile names another (which then replaces it whole:
# merged, its studies would run beside the default's). Read by our loader first so that a
# YAML error names the file, line and column (snakemake's own message names none; it parses
# --configfile files before this file runs, so `python -m interference.config FILE` checks those).
if not workflow.overwrite_configfiles:
    DEFAULT_CONFIG = os.path.join(workflow.basedir, "config", "config.yaml")
    try:
        read_yaml(DEFAULT_CONFIG)
    except ConfigError as error:
        raise WorkflowError(str(error)) from None

    configfile: DEFAULT_CONFIG


try:
    CONFIG = validate(
        config, source="the config (" + ", ".join(map(str, workflow.configfiles)) + ")"
    )
except ConfigError as error:
    raise WorkflowError(str(error)) from None

HOST = CONFIG["host"]
STUDIES = {name: studies.get(name) for name in CONFIG["studies"]}
RUN_META = "results/raw/{host}/{runtime}/{study}/{key}/rep{rep}/meta.json"
PARSED_PATH = "results/parsed/{host}/{runtime}/{study}/{key}/rep{rep}.tsv"
STATS_PATH = "results/stats/{study}/{table}.tsv"


wildcard_constraints:
    host=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    runtime="|".join(runtimes.ADAPTERS),
    study="|".join(studies.registry()),
    key="|".join(f"(?:{s.key_pattern})" for s in studies.registry().values()),
    table="|".join(sorted({t for s in studies.registry().values() for t in s.tables})),
    rep=r"[0-9]+",
    image=r"base|[A-Z]+(\+[A-Z]+)*",


def per_wildcards(fn):
    """An input function computed once per job: snakemake asks several times, and the answer
    depends on the wildcards alone (a dry run of 10,000 jobs stays within seconds)."""
    answers = {}

    @functools.wraps(fn)
    def once(wildcards):
        key = tuple(wildcards.items())
        if key not in answers:
            answers[key] = fn(wildcards)
        return answers[key]

    return once


@functools.cache
def study_runs(study):
    """(runtime, run key) of every run of one study in the config."""
    cfg = CONFIG["studies"][study]
    return [(rt, r) for rt in cfg["runtimes"] for r in STUDIES[study].runs_on(cfg, rt)]


@per_wildcards
def run_predecessors(wildcards):
    """A run its study measures after all others on its runtime waits for them. Ancient: a
    later rerun of one of them does not rerun it (it stays the end of the first session).
    """
    study = STUDIES[wildcards.study]
    if not study.after_all(wildcards.key):
        return []
    return [
        ancient(
            RUN_META.format(
                host=HOST,
                runtime=rt,
                study=wildcards.study,
                key=r.key,
                rep=r.repetition,
            )
        )
        for rt, r in study_runs(wildcards.study)
        if rt == wildcards.runtime and not study.after_all(r.key)
    ]


# The order runs are measured in (run_order.py): snakemake starts the ready job of highest
# priority; a run's priority is its distance from the end of the plan, images come first.
RUN_PLAN = run_order.plan(
    *(
        [
            (s, rt, r.key, r.repetition)
            for s in STUDIES
            for rt, r in study_runs(s)
            if STUDIES[s].after_all(r.key) == last
        ]
        for last in (False, True)
    ),
    **CONFIG["run_order"],
)


def planned_runs():
    """This host's runs still without meta.json, in plan order, each with its expected duration
    (estimate.py)."""
    todo = [
        (s, rt, r)
        for s in STUDIES
        for rt, r in study_runs(s)
        if not os.path.exists(
            RUN_META.format(host=HOST, runtime=rt, study=s, key=r.key, rep=r.repetition)
        )
    ]
    if not todo:
        return []
    todo.sort(key=lambda t: RUN_PLAN.get((t[0], t[1], t[2].key, t[2].repetition), 0))
    runs = [
        estimate.PlannedRun(
            s,
            rt,
            r.key,
            r.repetition,
            RUN_META.format(
                host=HOST, runtime=rt, study=s, key=r.key, rep=r.repetition
            ),
            {"host": HOST, **studies.run_settings(CONFIG, s, rt, r.key, r.repetition)},
        )
        for s, rt, r in todo
    ]
    past = estimate.history(Path("results"), HOST)
    return estimate.estimate(
        runs, past, lambda r: STUDIES[r.study].expected_seconds(r.settings)
    )


def run_priority(wildcards):
    run = (wildcards.study, wildcards.runtime, wildcards.key, int(wildcards.rep))
    return len(RUN_PLAN) - RUN_PLAN[run] if run in RUN_PLAN else 0


# Every core of a local snakemake, so that no other job runs beside a measurement; under a
# cluster executor (no --cores) one: the node is the job's alone (--exclusive).
RUN_THREADS = workflow.resource_settings.cores or 1


def run_metas(study):
    return [
        RUN_META.format(host=HOST, runtime=rt, study=study, key=r.key, rep=r.repetition)
        for rt, r in study_runs(study)
    ]


def all_run_metas():
    return [m for study in STUDIES for m in run_metas(study)]


def imported(pattern, study=None):
    """`pattern` (RUN_META, PARSED_PATH) for each run imported from another host (transfer.py)."""
    return [
        pattern.format(
            host=host,
            rep=r["repetition"],
            **{k: r[k] for k in ("runtime", "study", "key")},
        )
        for s in ([study] if study else STUDIES)
        for host, r in transfer.imported_runs(Path("results"), s)
    ]


@per_wildcards
def parsed_runs(wildcards):
    """This host's runs of the study, and those imported from other hosts."""
    own = [
        PARSED_PATH.format(
            host=HOST, runtime=rt, study=wildcards.study, key=r.key, rep=r.repetition
        )
        for rt, r in study_runs(wildcards.study)
    ]
    return own + imported(PARSED_PATH, wildcards.study)


def image_json(runtime, image):
    return f"results/images/{runtime}/{image}.json"


def all_images():
    """Every image json the config needs, per runtime."""
    out = set()
    for name, study in STUDIES.items():
        cfg = CONFIG["studies"][name]
        out |= {image_json(rt, i) for rt in cfg["runtimes"] for i in study.images(cfg)}
    return sorted(out)


@per_wildcards
def image_parent(wildcards):
    """What an image is made from: base from nothing; a microservice on base; a stack L+S on L;
    a runtime that converts another's images (bare metal) from that runtime's image."""
    source = runtimes.ADAPTERS[wildcards.runtime].capabilities.image_from
    if source:
        return [image_json(source, wildcards.image)]
    if wildcards.image == "base":
        return []
    members = wildcards.image.split("+")
    return [
        image_json(
            wildcards.runtime, "base" if len(members) == 1 else "+".join(members[:-1])
        )
    ]


@per_wildcards
def image_build_inputs(wildcards):
    """The files an image is built from (absolute: the workdir may be elsewhere, -d)."""
    adapter = runtimes.ADAPTERS[wildcards.runtime]
    if adapter.capabilities.image_from:  # what it makes beside the converted image
        return [str(Path(workflow.basedir) / p) for p in adapter.build_inputs]
    containers = Path(workflow.basedir) / "containers"
    if wildcards.image == "base":
        folder, extra = containers / "base", []
    else:
        last = wildcards.image.split("+")[-1]
        folder, extra = registry()[last].folder, [
            containers / "Dockerfile.microservice"
        ]
    return [str(p) for p in extra + sorted(folder.iterdir()) if p.is_file()]


def run_images(wildcards):
    return _run_images(wildcards.runtime, wildcards.study, wildcards.key)


@functools.cache  # the same for every repetition
def _run_images(runtime, study, key):
    names = STUDIES[study].run_images(CONFIG["studies"][study], key)
    return [image_json(runtime, n) for n in names]


@per_wildcards
def run_settings(wildcards):
    """The run's slice of the config, as JSON: changing it reruns exactly the affected runs."""
    settings = studies.run_settings(
        CONFIG, wildcards.study, wildcards.runtime, wildcards.key, int(wildcards.rep)
    )
    return json.dumps({"host": wildcards.host, **settings}, sort_keys=True)


# Each study's code inputs of a step, derived once per config (studies.code_files).
STEP_CODE = {
    (s, step): [str(p) for p in studies.code_files(s, step)]
    for s in STUDIES
    for step in ("parse", "statistics", "runs", "findings", "report")
}


def code_deps_closure(step_module):
    """A step's own module under scripts/interference and what it imports."""
    return [
        str(p) for p in code_deps.closure([Path(SCRIPTS, "interference", step_module)])
    ]


def parse_code(wildcards):
    return STEP_CODE[wildcards.study, "parse"]


def statistics_code(wildcards):
    return STEP_CODE[wildcards.study, "statistics"]


@per_wildcards
def table_inputs(wildcards):
    """A statistics table's inputs: the study's samples, the tables it needs, its data files."""
    table = STUDIES[wildcards.study].tables[wildcards.table]
    return {
        n: (
            f"results/parsed/{wildcards.study}/samples.tsv"
            if n == "samples"
            else STATS_PATH.format(study=wildcards.study, table=n)
        )
        for n in table.needs
    }


def table_files(wildcards):
    return [str(p) for p in STUDIES[wildcards.study].tables[wildcards.table].files]


def table_threads(wildcards):
    return STUDIES[wildcards.study].tables[wildcards.table].threads


def all_tables():
    return [
        STATS_PATH.format(study=s, table=t) for s in STUDIES for t in STUDIES[s].tables
    ]


def runtimes_to_check():
    """Runtimes with runs still to do (the plan printed at parse time): checked once before any
    job starts (onstart, which runs in the main process only, where PLANNED is set)."""
    return sorted({r.runtime for r in PLANNED})


def check_slurm():
    """Under the Slurm executor: a controller answers and this host is a node (before any job)."""
    plugin = workflow.executor_plugin
    if plugin is None or plugin.name != "slurm" or not runtimes_to_check():
        return
    try:
        slurm.check_node(HOST)
    except slurm.SlurmUnavailable as error:
        raise WorkflowError(f"Nothing was built or run: {error}.") from None


def check_runtimes():
    todo = set(runtimes_to_check())
    lacking = host_setup.missing(host_setup.needs(CONFIG, only_runtimes=todo))
    if lacking:
        explained = host_setup.explain(lacking, "This config")
        raise WorkflowError(f"Nothing was built or run: {explained}")
    problems = []
    for rt in sorted(todo):
        try:
            runtimes.get(rt, CONFIG["runtime_options"].get(rt)).check()
        except runtimes.RuntimeUnavailable as error:
            problems.append(f"runtime {rt!r}: {error}")
    if problems:
        raise WorkflowError("Nothing was built or run: " + " ".join(problems))
