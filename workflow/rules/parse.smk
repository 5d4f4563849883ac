# Parsers: each run's raw files -> one tidy TSV; then the union of all runs.


rule parse_run:
    input:
        meta=RUN_META,
    output:
        samples=PARSED_PATH,
    log:
        "results/logs/parse/{host}/{runtime}/case{case}/{pair}/rep{rep}.log",
    conda:
        "../envs/parse.yaml"
    shell:
        "python -m interference.studies.pairs.parse {input.meta} {output.samples} > {log} 2>&1"


rule merge_samples:
    input:
        runs=all_parsed(),
    output:
        samples="results/parsed/samples.tsv",
    log:
        "results/logs/parse/merge.log",
    conda:
        "../envs/parse.yaml"
    shell:
        "python -m interference.studies.pairs.parse --merge {output.samples} {input.runs} > {log} 2>&1"
