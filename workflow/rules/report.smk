# The paper: what ran (run_info: runs.tsv, environment.json from meta.json and image jsons,
# never raw outputs) and report/paper.qmd rendered to report/paper.html from results/stats/.
# Quarto renders it where the CLI is installed; elsewhere nbclient + nbconvert do (see
# scripts/interference/render_report.py). Editing the .qmd reruns the report rule only.

REPORT_QMD = os.path.join(workflow.basedir, "report", "paper.qmd")
REPORT_CSS = os.path.join(workflow.basedir, "report", "paper.css")
PUBLISHED = [
    os.path.join(workflow.basedir, "report", "published", name)
    for name in ("means.tsv", "interference_ratios.tsv")
]
REPORT_CODE = [
    os.path.join(SCRIPTS, "interference", name)
    for name in ("render_report.py", "reporting.py")
] + [
    os.path.join(SCRIPTS, "interference", "report_template", name)
    for name in ("index.html.j2", "conf.json")
]


# The microservices' declarations of the config (their changes rerun run_info).
DECLARATIONS = sorted(
    str(registry()[m].folder / "microservice.yaml") for m in CONFIG["microservices"]
)


rule run_info:
    input:
        metas=all_run_metas(),
        images=[
            image_json(runtime, image)
            for runtime in CONFIG["runtimes"]
            for image in case_matrix.images_needed(CONFIG)
        ],
        declarations=DECLARATIONS,
        code=os.path.join(SCRIPTS, "interference", "run_info.py"),
    output:
        runs="results/stats/runs.tsv",
        environment="results/stats/environment.json",
    log:
        "results/logs/run_info.log",
    conda:
        "../envs/report.yaml"
    params:
        # The validated config itself: a change of any key reruns this rule (and the report).
        config=json.dumps(CONFIG, sort_keys=True),
        config_files=[str(p) for p in workflow.configfiles],
    shell:
        "python -m interference.run_info --config {params.config:q} "
        "--config-files {params.config_files:q} --metas {input.metas:q} "
        "--images {input.images:q} --runs {output.runs} --environment {output.environment} "
        "> {log} 2>&1"


rule report:
    input:
        qmd=REPORT_QMD,
        css=REPORT_CSS,
        summary="results/stats/summary.tsv",
        interference="results/stats/interference.tsv",
        anova="results/stats/anova.tsv",
        posthoc="results/stats/posthoc.tsv",
        runs="results/stats/runs.tsv",
        environment="results/stats/environment.json",
        # The published tables that exist (one added later reruns the report).
        published=lambda wildcards: [p for p in PUBLISHED if os.path.exists(p)],
        code=REPORT_CODE,
    output:
        html="report/paper.html",
    log:
        "results/logs/report.log",
    conda:
        "../envs/report.yaml"
    params:
        published_dir=os.path.join(workflow.basedir, "report", "published"),
    shell:
        "python -m interference.render_report {input.qmd:q} --out {output.html} "
        "--stats-dir results/stats --published-dir {params.published_dir:q} > {log} 2>&1"
