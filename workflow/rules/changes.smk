# Changes: today's results against the saved sessions the config names (compare_with), one
# table per study: each cell's relative change with its CI and verdict (changes.py). Sessions
# are files (python -m interference.stores.sessions save NAME): never rerun, read whole and verified.


rule changes:
    input:
        samples="results/parsed/{study}/samples.tsv",
        summary="results/stats/{study}/summary.tsv",
        # The ratios it compares too (Study.compared: IRs, runtime and network ratios, ...).
        ratios=lambda wildcards: [
            STATS_PATH.format(study=wildcards.study, table=c.table)
            for c in STUDIES[wildcards.study].compared
        ],
        environment="results/stats/environment.json",
        sessions=CONFIG["compare_with"],
        code=code_deps_closure("steps/changes.py"),
    output:
        changes="results/stats/{study}/changes.tsv",
        differences="results/stats/{study}/changes.json",
        history="results/stats/{study}/history.tsv",
        session_variance="results/stats/{study}/session_variance.tsv",
        # What the regression check judges (stats/regression_check.py).
        regression="results/stats/{study}/regression.tsv",
    log:
        "results/logs/stats/{study}/changes.log",
    conda:
        "../envs/pipeline.yaml"
    params:
        across="--across-definitions" if CONFIG["compare_across_definitions"] else "",
        threshold=CONFIG["change_threshold"],
    shell:
        "python -m interference.steps.changes --study {wildcards.study} --samples {input.samples} "
        "--summary {input.summary} --environment {input.environment} "
        "--sessions {input.sessions:q} --threshold {params.threshold} {params.across} "
        "--out {output.changes} > {log} 2>&1"
