# Statistics of the tidy samples (interference.statistics): summary, interference ratios,
# two-way ANOVA (+ Kruskal-Wallis where residuals are not normal) and Tukey HSD.


rule statistics:
    input:
        samples="results/parsed/samples.tsv",
    output:
        summary="results/stats/summary.tsv",
        interference="results/stats/interference.tsv",
        anova="results/stats/anova.tsv",
        posthoc="results/stats/posthoc.tsv",
    log:
        "results/logs/statistics.log",
    conda:
        "../envs/stats.yaml"
    # Bootstraps and Tukey families run in parallel; results do not depend on the thread count.
    # Snakemake scales threads down to --cores; this runs after every measurement has finished.
    threads: 4
    shell:
        "python -m interference.studies.pairs.statistics --samples {input.samples} "
        "--summary {output.summary} --interference {output.interference} "
        "--anova {output.anova} --posthoc {output.posthoc} --jobs {threads} > {log} 2>&1"
