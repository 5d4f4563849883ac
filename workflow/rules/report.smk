# The paper: what ran (run_table: results/stats/<study>/runs.tsv and run_members.tsv; environment:
# results/stats/environment.json, from meta.json and image jsons, never raw outputs;
# run_order_table: results/stats/run_order.tsv, from the runs.tsv) and
# report/paper.qmd with each study's section rendered to report/paper.html from results/stats/.
# Quarto renders it where the CLI is installed; elsewhere nbclient + nbconvert do (see
# scripts/interference/rendering/render.py).

REPORT_QMD = os.path.join(workflow.basedir, "report", "paper.qmd")
REPORT_FILES = sorted(
    str(p)
    for p in Path(workflow.basedir, "report").rglob("*")
    if p.is_file() and p.suffix in (".qmd", ".css") and p != Path(REPORT_QMD)
)
PUBLISHED = sorted(
    str(p) for p in Path(workflow.basedir, "report", "published").glob("*.tsv")
)
REPORT_CODE = sorted(
    str(p)
    for p in Path(SCRIPTS, "interference", "rendering").rglob("*")
    if p.is_file() and "__pycache__" not in p.parts
)
# The run-facts steps and what each imports: the run tables, the environment, the run order.
RUN_TABLES_CODE = code_deps_closure("steps/run_tables.py")
ENVIRONMENT_CODE = code_deps_closure("steps/environment.py")
ORDER_AGREEMENT_CODE = code_deps_closure("steps/order_agreement.py")


rule run_table:
    input:
        metas=lambda wildcards: run_metas(wildcards.study)
        + imported(RUN_META, wildcards.study),
        step=RUN_TABLES_CODE,
        # The study's run_row() and member_rows() (its columns of runs.tsv, its member rows).
        code=lambda wildcards: STEP_CODE[wildcards.study, "runs"],
    output:
        runs="results/stats/{study}/runs.tsv",
        # One row per member of a run (no rows for a study whose runs have no members).
        members="results/stats/{study}/run_members.tsv",
    log:
        "results/logs/run_info/{study}.log",
    conda:
        "../envs/pipeline.yaml"
    shell:
        "python -m interference.steps.run_tables --study {wildcards.study} --metas {input.metas:q} "
        "--runs {output.runs} --members {output.members} > {log} 2>&1"


rule environment:
    input:
        metas=all_run_metas() + imported(RUN_META),
        images=all_images(),
        # The microservices' declarations (their changes rerun it).
        declarations=sorted(
            str(ms.folder / "microservice.yaml") for ms in registry().values()
        ),
        step=ENVIRONMENT_CODE,
    output:
        environment="results/stats/environment.json",
    log:
        "results/logs/run_info/environment.log",
    conda:
        "../envs/pipeline.yaml"
    params:
        # The validated config itself: a change of any key reruns this rule (and the report).
        config=json.dumps(CONFIG, sort_keys=True),
        config_files=[str(p) for p in workflow.configfiles],
    shell:
        "python -m interference.steps.environment --config {params.config:q} "
        "--config-files {params.config_files:q} --metas {input.metas:q} "
        "--images {input.images:q} --out {output.environment} > {log} 2>&1"


# How the runs' start times follow the planned order (Kendall's tau per host), computed here so
# that the report only reads it. The plan is recomputed from what ran and the config's run_order.
rule run_order_table:
    input:
        runs=expand("results/stats/{study}/runs.tsv", study=list(STUDIES)),
        # The step and the plan it recomputes, core/run_order.py (an edit of the plan changes
        # the table).
        step=ORDER_AGREEMENT_CODE,
    output:
        order="results/stats/run_order.tsv",
    log:
        "results/logs/run_info/run_order.log",
    conda:
        "../envs/pipeline.yaml"
    params:
        # A change of the seed reruns this table (and the report), no run.
        order=json.dumps(CONFIG["run_order"], sort_keys=True),
    shell:
        "python -m interference.steps.order_agreement --runs-tables {input.runs:q} "
        "--order {params.order:q} --out {output.order} > {log} 2>&1"


rule report:
    input:
        tables=all_tables(),
        runs=expand("results/stats/{study}/runs.tsv", study=list(STUDIES)),
        members=expand("results/stats/{study}/run_members.tsv", study=list(STUDIES)),
        run_order="results/stats/run_order.tsv",
        environment="results/stats/environment.json",
        findings="results/stats/findings.tsv",
        changes=all_changes(),
        placement=PLACEMENT_VALIDATION,
        advice=ADVICE_CHECKS,
        sections=[p for s in STUDIES for p in STEP_CODE[s, "report"]],
        qmd=REPORT_QMD,
        published=PUBLISHED,
        files=REPORT_FILES,
        code=REPORT_CODE,
    output:
        html="report/paper.html",
    log:
        "results/logs/report.log",
    conda:
        "../envs/pipeline.yaml"
    params:
        studies=list(STUDIES),
        published_dir=lambda wildcards, input: os.path.dirname(input.published[0]),
    shell:
        "python -m interference.rendering.render {input.qmd:q} --out {output.html} "
        "--stats-dir results/stats --studies {params.studies} "
        "--published-dir {params.published_dir:q} > {log} 2>&1"


# The scorecard: every published finding of the five papers (report/published/findings.yaml)
# against this config's tables, by its study's check (studies/<kind>/findings.py).
FINDINGS_CODE = code_deps_closure("steps/scorecard.py")


rule findings:
    input:
        tables=all_tables(),
        # Evidence: each member's threads (run_members.tsv, beside its run's case in runs.tsv).
        runs=expand("results/stats/{study}/runs.tsv", study=list(STUDIES)),
        members=expand("results/stats/{study}/run_members.tsv", study=list(STUDIES)),
        environment="results/stats/environment.json",
        catalogue=os.path.join(workflow.basedir, "report", "published", "findings.yaml"),
        published=PUBLISHED,
        step=FINDINGS_CODE,
        code=[
            str(p)
            for s in studies.registry()
            for p in studies.code_files(s, "findings")
        ],
    output:
        findings="results/stats/findings.tsv",
    log:
        "results/logs/stats/findings.log",
    conda:
        "../envs/pipeline.yaml"
    params:
        studies=list(STUDIES),
        published_dir=lambda wildcards, input: os.path.dirname(input.published[0]),
    shell:
        "python -m interference.steps.scorecard --stats-dir results/stats "
        "--studies {params.studies} --catalogue {input.catalogue:q} "
        "--published-dir {params.published_dir:q} --out {output.findings} > {log} 2>&1"
