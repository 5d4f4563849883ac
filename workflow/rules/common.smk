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

from interference import runtimes, studies
from interference.core import code_deps, run_order
from interference.core.microservices import registry
from interference.studies.base import WORKFLOW_TABLES
from interference.host import probe as host_probe, slurm
from interference.steps import (
    estimate,
    host_setup,
    plan as findings_plan,
    progress,
    transfer,
)
from interference.stores import durations, unfinished_jobs
from interference.steps.config import ConfigError, host_configs, read_yaml
from interference.stores import image_records, renamed_runtimes
from interference.core.runtime_names import RENAMED

PLAN_SCALE = estimate.Scale()  # set by planned_runs: the models' factor on this host

# The default experiment, unless --configfile names another (which then replaces it whole:
# merged, its studies would run beside the default's). Read by our loader first so that a
# YAML error names the file, line and column (snakemake's own message names none; it parses
# --configfile files before this file runs, so `python -m interference.steps.config FILE` checks those).
if not workflow.overwrite_configfiles:
    DEFAULT_CONFIG = os.path.join(workflow.basedir, "config", "config.yaml")
    try:
        read_yaml(DEFAULT_CONFIG)
    except ConfigError as error:
        raise WorkflowError(str(error)) from None

    configfile: DEFAULT_CONFIG


try:
    CONFIG, HOST_CONFIG = host_configs(
        config, source="the config (" + ", ".join(map(str, workflow.configfiles)) + ")"
    )
except ConfigError as error:
    raise WorkflowError(str(error)) from None

HOST = CONFIG["host"]
# The hosts whose runs this invocation makes (run_on; under Slurm each is a node), each with
# its own config (hosts.<host> overrides).
HOSTS = CONFIG["run_on"]
STUDIES = {name: studies.get(name) for name in CONFIG["studies"]}
RUN_META = studies.RUN_META
PARSED_PATH = "results/parsed/{host}/{runtime}/{study}/{key}/rep{rep}.tsv"
STATS_PATH = "results/stats/{study}/{table}.tsv"


# Image records of the layout before hosts shared a results folder are this host's.
if workflow.is_main_process:
    for record in image_records.migrate(
        Path("results/images"), HOST, runtimes.ADAPTERS
    ):
        print(f"image record moved under its host: {record}", file=sys.stderr)
    # Runs of a runtime since renamed (core/runtime_names.py) are moved to its new name.
    for line in renamed_runtimes.migrate(Path("results"), RENAMED):
        print(f"results of a renamed runtime: {line}", file=sys.stderr)


wildcard_constraints:
    host=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    runtime="|".join(runtimes.ADAPTERS),
    study="|".join(studies.registry()),
    key="|".join(f"(?:{s.key_pattern})" for s in studies.registry().values()),
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
def study_runs(study, host):
    """(runtime, run key) of every run of one study on one host of the config."""
    cfg = HOST_CONFIG[host]["studies"][study]
    return [(rt, r) for rt in cfg["runtimes"] for r in STUDIES[study].runs_on(cfg, rt)]


def host_runs(study):
    """(host, runtime, run key) of every run of one study in this invocation."""
    return [(h, rt, r) for h in HOSTS for rt, r in study_runs(study, h)]


# The order runs are measured in (core/run_order.py): snakemake starts the ready job of highest
# priority; a run's priority is its distance from the end of the plan, images come first.
RUN_PLAN = run_order.plan(
    *(
        [
            (s, rt, r.key, r.repetition)
            for s in STUDIES
            for rt, r in study_runs(s, HOSTS[0])
            if STUDIES[s].after_all(r.key) == last
        ]
        for last in (False, True)
    ),
    **CONFIG["run_order"],
)


CALIBRATION_RUNS = estimate.MIN_HISTORY_RUNS + 1


def calibration_metas():
    """The first runs of the order on this host, of studies with a model of a run: what `make
    paper` measures before a budgeted plan is made (on the config's own runs, without findings
    or budget), so that the plan is priced by this host's runs (estimate.host_scale) and not by
    its probe, which read ×1.6-2.4 on hosts whose runs took ×1.1-1.3 (docs/planning.md).
    """
    if HOST not in HOSTS:
        return []
    runs = [
        (s, rt, r)
        for s in STUDIES
        for rt, r in study_runs(s, HOST)
        if not STUDIES[s].after_all(r.key)
    ]
    runs.sort(key=lambda t: RUN_PLAN.get((t[0], t[1], t[2].key, t[2].repetition), 0))
    out = []
    for s, rt, r in runs:
        settings = studies.run_settings(HOST_CONFIG[HOST], s, rt, r.key, r.repetition)
        if STUDIES[s].expected_seconds({"host": HOST, **settings}) is None:
            continue
        out.append(
            RUN_META.format(host=HOST, runtime=rt, study=s, key=r.key, rep=r.repetition)
        )
        if len(out) == CALIBRATION_RUNS:
            break
    return out


def command_line():
    """The command line as snakemake's own parser reads it: the workflow's DAG settings are not
    set yet when the plan is printed."""
    from snakemake.cli import get_argument_parser

    return get_argument_parser().parse_known_args(sys.argv[1:])[0]


def forced_runs():
    """The run outputs named by --forcerun (a run's meta.json: the README's rerun of one case),
    and whether every run is forced (--forcerun run, --forceall)."""
    args = command_line()
    named = {str(f) for f in (args.forcerun or ())}
    return named, bool(args.forceall) or "run" in named


def planned_runs():
    """The runs still without meta.json, forced to run again or left unfinished (a forced rerun
    stopped mid-run), in plan order, each with its expected duration (steps/estimate.py, from
    the past runs of its host); and a run its study measures after all others (the drift
    check's) where one of those is to do, since it then runs again.
    """
    every = [(s, h, rt, r) for s in STUDIES for h, rt, r in host_runs(s)]
    named, every_forced = forced_runs()
    # A run interrupted mid-rerun keeps its old meta.json, and snakemake makes it again.
    named |= unfinished_jobs.unfinished_outputs()

    def to_do(meta):
        return every_forced or meta in named or not os.path.exists(meta)

    todo = [
        (s, h, rt, r)
        for s, h, rt, r in every
        if to_do(
            RUN_META.format(host=h, runtime=rt, study=s, key=r.key, rep=r.repetition)
        )
    ]
    busy = {(s, h, rt) for s, h, rt, r in todo if not STUDIES[s].after_all(r.key)}
    missing = set(todo)
    todo += [
        t
        for t in every
        if t[:3] in busy and STUDIES[t[0]].after_all(t[3].key) and t not in missing
    ]
    todo.sort(key=lambda t: RUN_PLAN.get((t[0], t[2], t[3].key, t[3].repetition), 0))
    if list(command_line().targets or ()) == ["calibration"]:  # make paper's first step
        first = set(calibration_metas())
        todo = [
            t
            for t in todo
            if RUN_META.format(
                host=t[1], runtime=t[2], study=t[0], key=t[3].key, rep=t[3].repetition
            )
            in first
        ]
    runs = [
        estimate.PlannedRun(
            s,
            rt,
            r.key,
            r.repetition,
            RUN_META.format(host=h, runtime=rt, study=s, key=r.key, rep=r.repetition),
            {
                "host": h,
                **studies.run_settings(HOST_CONFIG[h], s, rt, r.key, r.repetition),
            },
        )
        for s, h, rt, r in todo
    ]
    past = {}
    for h in {t[1] for t in todo}:
        past |= durations.history(Path("results"), h)
    # The models scaled to this host: by its earlier runs, else by a probe of it (the one a
    # budgeted plan kept, else measured now; only when some run has no history).
    global PLAN_SCALE
    PLAN_SCALE = estimate.model_scale(
        past,
        estimate.study_model,
        ((lambda: host_probe.cached_probe(Path("results"), HOST)) if runs else None),
        estimate.study_fixed,
    )
    return estimate.estimate(
        runs,
        past,
        lambda r: STUDIES[r.study].expected_seconds(r.settings),
        PLAN_SCALE,
        lambda r: STUDIES[r.study].fixed_seconds(r.settings),
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
    """Under the Slurm executor: a controller answers and each host with runs to do is a node
    that responds, sees this folder and has its runtimes (before any job is submitted).
    Without it, only this machine's host runs here."""
    hosts = sorted({r.settings["host"] for r in PLANNED})
    # Nodes a run uses besides its own (a server on another host), with no runtime of theirs.
    remote = {h: r for r in PLANNED for h in STUDIES[r.study].other_nodes(r.settings)}
    if not under_slurm():
        if others := [h for h in hosts if h != HOST]:
            raise WorkflowError(
                f"Nothing was built or run: run_on names {', '.join(others)} beside this "
                f"machine's host {HOST!r}; runs of other hosts need the Slurm profile "
                "(--profile profiles/slurm, each host a node) or are imported "
                "(interference.steps.transfer; set run_on to this host)."
            )
        if remote:
            h, r = next(iter(remote.items()))
            raise WorkflowError(
                f"Nothing was built or run: the {r.study} run {r.key} uses host {h!r} too, "
                "started there through Slurm: run it with --profile profiles/slurm."
            )
        return
    # A host's study is one long Slurm job: check it every 10 s at most (host/slurm.py says why).
    # (The executor is known from onstart on, not while the Snakefile is read.)
    from snakemake_executor_plugin_slurm import Executor as SlurmExecutor

    slurm.cap_status_interval(SlurmExecutor, 10)
    try:
        slurm.check_nodes(
            {
                h: sorted({r.runtime for r in PLANNED if r.settings["host"] == h})
                for h in sorted(set(hosts) | set(remote))
            },
            Path.cwd(),
            CONFIG["runtime_options"],
        )
    except slurm.SlurmUnavailable as error:
        raise WorkflowError(f"Nothing was built or run: {error}.") from None


def under_slurm():
    """Under the Slurm executor (known from onstart on: None while the Snakefile is read)."""
    plugin = workflow.executor_plugin
    return plugin is not None and plugin.name == "slurm"


def check_runtimes():
    """This machine's runtimes with runs to do answer (under Slurm the nodes were asked)."""
    if under_slurm():
        return
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
