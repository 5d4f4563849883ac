# Parsers: each run's raw files -> one tidy TSV (the study's parse()); then the union of a
# study's runs. The study's code, the microservice parsers and the telemetry join are inputs:
# editing one reparses.

PARSERS_CODE = sorted(
    str(p) for p in Path(SCRIPTS, "interference", "parsers").glob("*.py")
) + [str(Path(SCRIPTS, "interference", f)) for f in ("parse.py", "telemetry.py")]


rule parse_run:
    input:
        meta=RUN_META,
        code=parse_code,
        parsers=PARSERS_CODE,
    output:
        samples=PARSED_PATH,
    log:
        "results/logs/parse/{host}/{runtime}/{study}/{key}/rep{rep}.log",
    conda:
        "../envs/parse.yaml"
    shell:
        "python -m interference.parse {input.meta} {output.samples} > {log} 2>&1"


rule merge_samples:
    input:
        runs=parsed_runs,
    output:
        samples="results/parsed/{study}/samples.tsv",
    log:
        "results/logs/parse/{study}/merge.log",
    conda:
        "../envs/parse.yaml"
    shell:
        "python -m interference.parse --merge {output.samples} {input.runs} > {log} 2>&1"
