# Benchmark runs: one job per (host, runtime, case, pair, repetition). The `measurement`
# resource (1 unless --resources says otherwise) and a host-wide lock in the runner keep
# measurements from overlapping, whatever --cores says.


rule run_case:
    input:
        images=run_images,
    output:
        meta=RUN_META,
    log:
        "results/logs/run/{host}/{runtime}/case{case}/{pair}/rep{rep}.log",
    conda:
        "../envs/runner.yaml"
    resources:
        measurement=1,
    params:
        settings=run_settings,
    shell:
        "python -m interference.studies.pairs.execute --settings {params.settings:q} "
        "--images {input.images} --meta {output.meta} > {log} 2>&1"
