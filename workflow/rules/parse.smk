# Parsers: each run's raw files -> one tidy TSV (the study's parse()); then the union of a
# study's runs. The parse step's code (the study's parse.py and what it imports, the
# microservice parsers, which are loaded by name, and the step itself) is listed with its
# hashes in one file per study: editing any of it reparses, and each of thousands of parse
# jobs has one code input instead of a score.

PARSERS_CODE = sorted(
    str(p) for p in Path(SCRIPTS, "interference", "parsers").glob("*.py")
) + code_deps_closure("steps/parse.py")


rule parse_code_listing:
    input:
        code=lambda wildcards: sorted(set(parse_code(wildcards) + PARSERS_CODE)),
    output:
        listing="results/code/{study}/parse.tsv",
    log:
        "results/logs/parse/{study}/code.log",
    conda:
        "../envs/pipeline.yaml"
    shell:
        "python -m interference.core.code_deps --out {output.listing} {input.code} > {log} 2>&1"


rule parse_run:
    input:
        meta=RUN_META,
        code="results/code/{study}/parse.tsv",
    output:
        samples=PARSED_PATH,
    log:
        "results/logs/parse/{host}/{runtime}/{study}/{key}/rep{rep}.log",
    conda:
        "../envs/pipeline.yaml"
    shell:
        "python -m interference.steps.parse {input.meta} {output.samples} > {log} 2>&1"


rule merge_samples:
    input:
        runs=parsed_runs,
    output:
        samples="results/parsed/{study}/samples.tsv",
    log:
        "results/logs/parse/{study}/merge.log",
    conda:
        "../envs/pipeline.yaml"
    shell:
        "python -m interference.steps.parse --merge {output.samples} {input.runs} > {log} 2>&1"
