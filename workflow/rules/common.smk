# Shared helpers: the validated config, the run matrix of every study, the order runs are
# measured in, and the checks before the first job (the input functions are in inputs.smk).
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
