# Statistics: one job per study (rule statistics_<study>) writing every table the study declares
# (Study.tables in its module), e.g. the pair study's summary, interference ratios, ANOVA, post
# hoc tests and runtime comparison, each after the tables it needs. One process per study, not
# per table: importing scipy and statsmodels takes longer than most tables take to compute. Its
# code is an input: editing it recomputes the study's tables (seconds), never a run.

STATISTICS_CODE = os.path.join(SCRIPTS, "interference", "steps", "statistics.py")


for _study in STUDIES:

    rule:
        name:
            f"statistics_{_study}"
        input:
            samples=f"results/parsed/{_study}/samples.tsv",
            files=study_table_files(_study),
            # runs.tsv where a table prices a run by its measured duration
            workflow_tables=study_workflow_tables(_study),
            code=STEP_CODE[_study, "statistics"],
            step=STATISTICS_CODE,
        output:
            study_tables(_study),
        log:
            f"results/logs/stats/{_study}.log",
        localrule: True
        conda:
            "../envs/pipeline.yaml"
        # Bootstraps and Tukey families run in parallel where a table declares threads
        # (Table.threads); results do not depend on the thread count.
        threads: study_table_threads(_study)
        params:
            study=_study,
            # the tables' folder, from the outputs (not a second hard-coded path)
            out_dir=lambda wildcards, output: os.path.dirname(output[0]),
        shell:
            "python -m interference.steps.statistics --study {params.study} --samples {input.samples} "
            "--out-dir {params.out_dir} --jobs {threads} > {log} 2>&1"


# Placement advice checked (issue 35): with both the profiling and the pair study in the config,
# on one host and a runtime both ran on, and bubbles profiled, the bubble model's predictions from
# the profiles alone against the pairs measured (steps/placement.py validate); the report's
# profiling section shows the result. Profiles of the quota sweep alone (no bubble) are the
# CPU-share model's: `make validate-placement MODEL=cpu-shares` scores it.
PLACEMENT_RUNTIMES = (
    [
        rt
        for rt in CONFIG["studies"]["profiling"]["runtimes"]
        if rt in CONFIG["studies"]["pairs"]["runtimes"]
    ]
    if {"pairs", "profiling"} <= set(STUDIES)
    and len(HOSTS) == 1
    and CONFIG["studies"]["profiling"]["resources"]
    else []
)
PLACEMENT_VALIDATION = (
    [
        f"results/stats/placement/{name}"
        for name in (
            "validation.tsv",
            "validation_summary.tsv",
            "failures.tsv",
            "validation.png",
        )
    ]
    if PLACEMENT_RUNTIMES
    else []
)
# Each triple the pair study measured: the advice for its three microservices on this host,
# its recommended and worst-ranked measured placements compared run by run (placement check).
ADVICE_CHECKS = (
    [
        f"results/stats/placement/advice-check-{triple}.tsv"
        for triple in CONFIG["studies"]["pairs"].get("triples") or []
        # three different microservices, each profiled
        if len(set(triple.split("+"))) == 3
        and set(triple.split("+"))
        <= set(CONFIG["studies"]["profiling"]["microservices"])
    ]
    if PLACEMENT_RUNTIMES
    else []
)

if PLACEMENT_VALIDATION:

    rule placement_validation:
        input:
            profiles=study_tables("profiling"),
            measured="results/stats/pairs/interference.tsv",
            code=code_deps_closure("steps/placement.py"),
        output:
            PLACEMENT_VALIDATION,
        log:
            "results/logs/stats/placement.log",
        localrule: True
        conda:
            "../envs/pipeline.yaml"
        params:
            host=HOSTS[0],
            runtime=PLACEMENT_RUNTIMES[0],
        shell:
            "python -m interference.steps.placement validate --stats results/stats --host {params.host} "
            "--runtime {params.runtime} > {log} 2>&1"

    rule advice_check:
        input:
            profiles=study_tables("profiling"),
            measured="results/stats/pairs/interference.tsv",
            samples="results/parsed/pairs/samples.tsv",
            code=code_deps_closure("steps/placement.py"),
        output:
            check="results/stats/placement/advice-check-{services}.tsv",
            advice="results/stats/placement/advice-{services}.tsv",
        log:
            "results/logs/stats/advice-check-{services}.log",
        wildcard_constraints:
            services=r"[A-Z]+(\+[A-Z]+)+",
        localrule: True
        conda:
            "../envs/pipeline.yaml"
        params:
            host=HOSTS[0],
            runtime=PLACEMENT_RUNTIMES[0],
            services=lambda wildcards: wildcards.services.replace("+", " "),
            # The cores and memory of the machine running the workflow: the host that measured
            # (placement checks run on one host; under Slurm the node may differ, and the rule
            # then advises for this machine).
            cores=len(os.sched_getaffinity(0)),
            memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        shell:
            "python -m interference.steps.placement check --stats results/stats --samples {input.samples} "
            "--host {params.host} --runtime {params.runtime} --services {params.services} "
            "--cores {params.cores} --memory {params.memory} > {log} 2>&1"
