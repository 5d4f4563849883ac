# Image build: results/images/<host>/<runtime>/<image>.json records the image id and the hash of
# its build inputs; the image is rebuilt only when those inputs change. A runtime that
# converts another's images (bare metal: a root file system from Docker's image) gets that
# runtime's image json as its input instead of the build files.


rule build_image:
    input:
        parent=image_parent,
        sources=image_build_inputs,
    output:
        image="results/images/{host}/{runtime}/{image}.json",
    log:
        "results/logs/images/{host}/{runtime}/{image}.log",
    # Every image before any run: the runs then follow run_order without waiting on a build.
    priority: len(RUN_PLAN) + 1
    conda:
        "../envs/pipeline.yaml"
    resources:
        measurement=1,
        # Under Slurm: built on the node of its host, whose engine holds it, alone there like a
        # run (and so one Slurm job with the host's runs: profiles/slurm groups them).
        slurm_extra=lambda wildcards: f"--nodelist={wildcards.host} --exclusive",
    params:
        base_image=CONFIG["base_image"],
        mirror=CONFIG["debian_mirror"],
        suite=CONFIG["debian_suite"],
        options=lambda wildcards: json.dumps(
            CONFIG["runtime_options"].get(wildcards.runtime, {})
        ),
        on=lambda wildcards, input: f"--on {input.parent[0]}" if input.parent else "",
    shell:
        "python -m interference.steps.images {wildcards.image:q} --runtime {wildcards.runtime} "
        "--options {params.options:q} {params.on} --base-image {params.base_image:q} "
        "--mirror {params.mirror:q} --suite {params.suite:q} --out {output.image} --log {log}"
