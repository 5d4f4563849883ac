# Re-runs published studies of microservices in containers and writes report/paper.html.
#   snakemake --cores 1 report/paper.html                     every study of config/config.yaml
#   snakemake --cores 1 report/paper.html --configfile config/ci.yaml     another experiment
#   snakemake --cores 1 --forcerun <a meta.json path>          rerun exactly one run (see README)
# Rules, one file per step: images.smk (build_image), run.smk (run: the generic runner),
# parse.smk (parse_run, merge_samples), stats.smk (statistics_<study>: every table a study
# declares), changes.smk (changes: today against saved sessions), report.smk (run_table,
# environment, run_order_table, findings, report); common.smk and inputs.smk hold the config, the run matrix
# and the input functions.
# A study kind is a folder scripts/interference/studies/<kind>/: __init__.py declares its runs
# and tables, execute.py is its runner, parse.py its parser, statistics(/) its tables, findings
# its checks of the papers, section.qmd its part of the report. A runtime is its adapter in
# scripts/interference/runtimes/ with its import and entry in runtimes/__init__.py.
import os
import sys

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"
include: "workflow/rules/inputs.smk"
include: "workflow/rules/images.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/changes.smk"
include: "workflow/rules/report.smk"


# Under Slurm (profiles/slurm) a host's image builds and runs are one job on its node (each host
# of run_on a node); the rest is quick and stays here (statistics_<study>: localrule in stats.smk).
localrules:
    changes,
    parse_code_listing,
    parse_run,
    merge_samples,
    run_table,
    environment,
    run_order_table,
    findings,
    report,


# Before the first job (and in a dry run): the runs to do and how long they should take.
if workflow.is_main_process:
    PLANNED = planned_runs()
    for line in findings_plan.plan_lines(CONFIG.get("findings_plan")):
        print(line, file=sys.stderr)
    for line in estimate.plan_lines(
        PLANNED, [i for i in all_images() if not os.path.exists(i)], PLAN_SCALE
    ):
        print(line, file=sys.stderr)


onstart:
    # Every runtime with runs to do must answer before any image is built or run started.
    check_slurm()
    check_runtimes()
    # A line per finished run, with the time left.
    if PLANNED:
        progress.Progress(PLANNED).start()


rule all:
    default_target: True
    input:
        "report/paper.html",


rule images:
    """Every image the config's runs use, on each host of run_on (no run)."""
    input:
        all_images(),


rule raw:
    """Every benchmark run of the config (the raw artifacts only)."""
    input:
        all_run_metas(),


rule calibration:
    """The config's first runs in its order: `make paper` makes them first, with no findings and
    no budget, so that the budgeted plan of the next invocation is priced by this host's runs.
    """
    input:
        calibration_metas(),


rule stats:
    """Every statistics table of the config, the run tables and the findings scorecard
    (without the report)."""
    input:
        all_tables(),
        expand("results/stats/{study}/runs.tsv", study=list(STUDIES)),
        expand("results/stats/{study}/run_members.tsv", study=list(STUDIES)),
        "results/stats/findings.tsv",
        all_changes(),
