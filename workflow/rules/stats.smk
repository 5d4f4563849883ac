# Statistics: one job per table a study declares (Study.tables in its module), e.g. the pair
# study's summary, interference ratios, ANOVA, post hoc tests and runtime comparison. Its
# code is an input: editing it recomputes the tables.

STATISTICS_CODE = os.path.join(SCRIPTS, "interference", "steps", "statistics.py")


rule statistics:
    input:
        unpack(table_inputs),
        files=table_files,
        code=statistics_code,
        step=STATISTICS_CODE,
    output:
        table=STATS_PATH,
    log:
        "results/logs/stats/{study}/{table}.log",
    conda:
        "../envs/pipeline.yaml"
    # Bootstraps and Tukey families run in parallel where a table declares threads (Table.threads);
    # results do not depend on the thread count.
    threads: table_threads
    params:
        inputs=lambda wildcards, input: " ".join(
            f"--input {name}={path}"
            for name, path in input.items()
            if name not in ("files", "code", "step")
        ),
    shell:
        "python -m interference.steps.statistics --study {wildcards.study} --table {wildcards.table} "
        "{params.inputs} --out {output.table} --jobs {threads} > {log} 2>&1"
