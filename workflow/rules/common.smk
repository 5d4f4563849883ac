# Shared helpers: the validated config, the case matrix and the input functions.
import json
import os
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod

SCRIPTS = os.path.join(workflow.basedir, "scripts")
sys.path.insert(0, SCRIPTS)

# Python steps import scripts/interference. Without --sdm conda they run on the Python that
# runs snakemake (the project's venv); with it, on the rule's conda env.
_prefix = f"set -euo pipefail; export PYTHONPATH={SCRIPTS}; "
if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
    _prefix += f"export PATH={os.path.dirname(sys.executable)}:$PATH; "
shell.prefix(_prefix)

from interference.studies.pairs import cases as case_matrix
from interference.config import ConfigError, validate
from interference.microservices import registry

try:
    CONFIG = validate(
        config, source="the config (" + ", ".join(map(str, workflow.configfiles)) + ")"
    )
except ConfigError as error:
    raise WorkflowError(str(error)) from None

HOST = CONFIG["host"]
RUN_META = "results/raw/{host}/{runtime}/case{case}/{pair}/rep{rep}/meta.json"
PARSED_PATH = "results/parsed/{host}/{runtime}/case{case}/{pair}/rep{rep}.tsv"


wildcard_constraints:
    host=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    runtime=r"[a-z0-9]+",
    case=r"1|2|3a|3b",
    pair=r"[A-Z]+(\+[A-Z]+)?",
    rep=r"[0-9]+",
    image=r"base|[A-Z]+(\+[A-Z]+)?",


def all_runs():
    return case_matrix.runs(CONFIG)


def all_run_metas():
    return [RUN_META.format(host=HOST, rep=r["repetition"], **r) for r in all_runs()]


def all_parsed():
    return [PARSED_PATH.format(host=HOST, rep=r["repetition"], **r) for r in all_runs()]


def image_json(runtime, image):
    return f"results/images/{runtime}/{image}.json"


def image_parent(wildcards):
    """A microservice image builds on base; a pair image X+Y on the image of X."""
    if wildcards.image == "base":
        return []
    members = case_matrix.members_of(wildcards.image)
    parent = "base" if len(members) == 1 else members[0]
    return [image_json(wildcards.runtime, parent)]


def run_images(wildcards):
    """The image files a run uses: its members' images, or the pair image in Case 2."""
    members = case_matrix.members_of(wildcards.pair)
    names = case_matrix.image_for(wildcards.case, members)
    # Network servers run from their microservice's image.
    names += [m for m in members if registry()[m].server]
    return sorted({image_json(wildcards.runtime, n) for n in names})


def run_settings(wildcards):
    """The run's slice of the config, as JSON: changing it reruns exactly the affected runs."""
    members = case_matrix.members_of(wildcards.pair)
    settings = {
        "host": wildcards.host,
        "runtime": wildcards.runtime,
        "case": wildcards.case,
        "pair": wildcards.pair,
        "repetition": int(wildcards.rep),
        "iteration_timeout_s": CONFIG["iteration_timeout_s"],
        "limits": CONFIG["limits"],
        "sizes": {m: CONFIG["sizes"][m] for m in members},
    }
    if wildcards.case == "1":
        settings["iterations"] = CONFIG["iterations"]
    else:
        settings["window_s"] = CONFIG["window_s"][wildcards.case]
    return json.dumps(settings, sort_keys=True)


def image_build_inputs(wildcards):
    """The files an image is built from (absolute: the workdir may be elsewhere, -d)."""
    containers = Path(workflow.basedir) / "containers"
    if wildcards.image == "base":
        folder, extra = containers / "base", []
    else:
        last = case_matrix.members_of(wildcards.image)[-1]
        folder, extra = registry()[last].folder, [
            containers / "Dockerfile.microservice"
        ]
    return [str(p) for p in extra + sorted(folder.iterdir()) if p.is_file()]
