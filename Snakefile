# Re-runs the papers' container-interference experiments and writes report/paper.html.
#   snakemake --cores 1 report/paper.html                     the whole study (config/config.yaml)
#   snakemake --cores 1 --configfile config/ci.yaml ...        another experiment
#   snakemake --cores 1 --forcerun <a meta.json path>          rerun exactly one case (see README)
# Rules: images.smk (image build), run.smk (benchmark runs), parse.smk (tidy samples),
# stats.smk (statistics), report.smk (the paper). Python steps live in scripts/interference/.
import os

from snakemake.utils import min_version

min_version("9.0")


# The default experiment; --configfile FILE on the command line merges over it.
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/images.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        "report/paper.html",


rule raw:
    """Every benchmark run of the config (the raw artifacts only)."""
    input:
        all_run_metas(),
