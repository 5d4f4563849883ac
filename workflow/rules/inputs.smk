# The input functions: what each job reads (images, the runs it waits for, parsed runs, code,
# tables), from the config's run matrix (common.smk) and the studies' declarations. Each is
# computed once per job (per_wildcards) or once per config.


@per_wildcards
def run_predecessors(wildcards):
    """A run its study measures after all others on its runtime waits for them. Ancient: a
    later rerun of one of them does not rerun it (it stays the end of the first session).
    """
    study = STUDIES[wildcards.study]
    if not study.after_all(wildcards.key):
        return []
    return [
        ancient(
            RUN_META.format(
                host=wildcards.host,
                runtime=rt,
                study=wildcards.study,
                key=r.key,
                rep=r.repetition,
            )
        )
        for rt, r in study_runs(wildcards.study, wildcards.host)
        if rt == wildcards.runtime and not study.after_all(r.key)
    ]


def run_metas(study):
    return [
        RUN_META.format(host=h, runtime=rt, study=study, key=r.key, rep=r.repetition)
        for h, rt, r in host_runs(study)
    ]


def all_run_metas():
    return [m for study in STUDIES for m in run_metas(study)]


def imported(pattern, study=None):
    """`pattern` (RUN_META, PARSED_PATH) for each run imported from another host (steps/transfer.py)."""
    return [
        pattern.format(
            host=host,
            rep=r["repetition"],
            **{k: r[k] for k in ("runtime", "study", "key")},
        )
        for s in ([study] if study else STUDIES)
        for host, r in transfer.imported_runs(Path("results"), s)
        if host not in HOSTS  # run here: its own runs
    ]


@per_wildcards
def parsed_runs(wildcards):
    """This host's runs of the study, and those imported from other hosts."""
    own = [
        PARSED_PATH.format(
            host=h, runtime=rt, study=wildcards.study, key=r.key, rep=r.repetition
        )
        for h, rt, r in host_runs(wildcards.study)
    ]
    return own + imported(PARSED_PATH, wildcards.study)


def image_json(host, runtime, image):
    return image_records.record_path(host, runtime, image)


def all_images():
    """Every image json the config needs, per runtime."""
    out = set()
    for name, study in STUDIES.items():
        for host in HOSTS:
            cfg = HOST_CONFIG[host]["studies"][name]
            out |= {
                image_json(host, rt, i)
                for rt in cfg["runtimes"]
                for i in study.images(cfg)
            }
    return sorted(out)


@per_wildcards
def image_parent(wildcards):
    """What an image is made from: base from nothing; a microservice on base; a stack L+S on L;
    a runtime that converts another's images (bare metal) from that runtime's image."""
    source = runtimes.ADAPTERS[wildcards.runtime].capabilities.image_from
    if source:
        return [image_json(wildcards.host, source, wildcards.image)]
    if wildcards.image == "base":
        return []
    members = wildcards.image.split("+")
    return [
        image_json(
            wildcards.host,
            wildcards.runtime,
            "base" if len(members) == 1 else "+".join(members[:-1]),
        )
    ]


@per_wildcards
def image_build_inputs(wildcards):
    """The files an image is built from (absolute: the workdir may be elsewhere, -d)."""
    adapter = runtimes.ADAPTERS[wildcards.runtime]
    if adapter.capabilities.image_from:  # what it makes beside the converted image
        return [str(Path(workflow.basedir) / p) for p in adapter.build_inputs]
    containers = Path(workflow.basedir) / "containers"
    if wildcards.image == "base":
        folder, extra = containers / "base", []
    else:
        last = wildcards.image.split("+")[-1]
        folder, extra = registry()[last].folder, [
            containers / "Dockerfile.microservice"
        ]
    return [str(p) for p in extra + sorted(folder.iterdir()) if p.is_file()]


def run_images(wildcards):
    return _run_images(
        wildcards.host, wildcards.runtime, wildcards.study, wildcards.key
    )


@functools.cache  # the same for every repetition
def _run_images(host, runtime, study, key):
    names = STUDIES[study].run_images(HOST_CONFIG[host]["studies"][study], key)
    return [image_json(host, runtime, n) for n in names]


@per_wildcards
def run_settings(wildcards):
    """The run's slice of the config, as JSON: changing it reruns exactly the affected runs."""
    settings = studies.run_settings(
        HOST_CONFIG[wildcards.host],
        wildcards.study,
        wildcards.runtime,
        wildcards.key,
        int(wildcards.rep),
    )
    return json.dumps({"host": wildcards.host, **settings}, sort_keys=True)


# Each study's code inputs of a step, derived once per config (studies.code_files).
STEP_CODE = {
    (s, step): [str(p) for p in studies.code_files(s, step)]
    for s in STUDIES
    for step in ("parse", "statistics", "runs", "findings", "report")
}


def code_deps_closure(step_module):
    """A step's own module under scripts/interference and what it imports."""
    return [
        str(p) for p in code_deps.closure([Path(SCRIPTS, "interference", step_module)])
    ]


def parse_code(wildcards):
    return STEP_CODE[wildcards.study, "parse"]


def study_tables(study):
    """The paths of every table a study declares: the outputs of its statistics job."""
    return [STATS_PATH.format(study=study, table=t) for t in STUDIES[study].tables]


def study_table_files(study):
    """Data files the study's tables read (e.g. published tables): their change reruns them."""
    return sorted({str(p) for t in STUDIES[study].tables.values() for p in t.files})


def study_workflow_tables(study):
    """The tables of the workflow's own rules (runs.tsv, ...) that a study's tables need."""
    return sorted(
        {
            STATS_PATH.format(study=study, table=n)
            for t in STUDIES[study].tables.values()
            for n in t.needs
            if n in WORKFLOW_TABLES
        }
    )


def study_table_threads(study):
    return max((t.threads for t in STUDIES[study].tables.values()), default=1)


def all_tables():
    return [path for study in STUDIES for path in study_tables(study)]


def all_changes():
    """Every study's changes table, when the config names sessions to compare with."""
    if not CONFIG["compare_with"]:
        return []
    return expand("results/stats/{study}/changes.tsv", study=list(STUDIES))
