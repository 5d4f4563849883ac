# Benchmark runs: one job per (host, runtime, study, run key, repetition), done by the
# generic runner (interference.steps.runner) with the study's execute(). The `measurement`
# resource (1, from the workflow profile) and a host-wide lock in the runner keep
# measurements from overlapping, whatever --cores says; taking every core keeps the other
# jobs (parsing, statistics) from running beside one.


rule run:
    input:
        images=run_images,
        after=run_predecessors,
    # update(): snakemake keeps the meta.json of a run made before while the run is made again
    # and restores it if the new one fails or is interrupted (the runner puts back its raw files).
    output:
        meta=update(RUN_META),
    log:
        "results/logs/run/{host}/{runtime}/{study}/{key}/rep{rep}.log",
    # Only the hosts of run_on are run here; other hosts' runs are imported (steps/transfer.py).
    wildcard_constraints:
        host="|".join(map(re.escape, HOSTS)),
    # Runs start in the config's run_order (seeded random by default).
    priority: run_priority
    conda:
        "../envs/pipeline.yaml"
    # Every core snakemake was given: no parse or statistics job runs beside a measurement.
    threads: RUN_THREADS
    resources:
        measurement=1,
        # Under Slurm: the node its host names, alone (ignored when run locally).
        slurm_extra=lambda wildcards: f"--nodelist={wildcards.host} --exclusive",
    params:
        settings=run_settings,
    shell:
        "python -m interference.steps.runner --study {wildcards.study} --settings {params.settings:q} "
        "--images {input.images} --meta {output.meta} > {log} 2>&1"
