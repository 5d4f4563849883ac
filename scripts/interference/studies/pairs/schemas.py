"""The columns of every table of the pair study (results/stats/pairs/<table>.tsv), in order,
with their kinds: PairsStudy.tables gives each its schema, the statistics step validates the
table against it before writing, and the statistics modules and the report take their column
lists from here. docs/statistics.md says what each column means. RUN_MEMBERS is the run facts'
table of the study's members (run_members.tsv, checked by steps/run_tables.py)."""

from __future__ import annotations

from interference.core.table_schema import FLAG, INTEGER, NUMBER, RUN_MEMBER, TEXT, TableSchema
from interference.stats.described import DESCRIBED

# The cgroup limits a member's container requested (its run's meta.json) and read back inside
# it (limits.txt): one column each in run_members.tsv, requested_<key> and read_<key>.
REQUESTED_KEYS = ("cpuset", "cpus", "memory")
READ_BACK_KEYS = ("cpuset", "cpu_quota_us", "cpu_period_us", "memory_max", "nproc", "cgroup_version")
REQUESTED = {key: f"requested_{key}" for key in REQUESTED_KEYS}
READ_BACK = {key: f"read_{key}" for key in READ_BACK_KEYS}
# One row per member of a run (runs.py writes its facts): its workload sizes ('n=5000,
# threads=0'), iterations and failed ones, the container it ran in (its role: member1, or
# member1+member2 when shared), the limits as requested and as read back (text, as recorded),
# whether they match ('yes', 'unlimited' or what differs), the threads of a multithreaded
# microservice (empty for the others) and the cores its network server was given ('any' when
# not pinned; empty without a server: config network_server_cpus).
RUN_MEMBERS = TableSchema(
    RUN_MEMBER,
    TableSchema(sizes=TEXT, iterations=INTEGER, failed=INTEGER, container=TEXT),
    TableSchema(**dict.fromkeys(REQUESTED.values(), TEXT), **dict.fromkeys(READ_BACK.values(), TEXT)),
    limits_match=TEXT,
    threads=INTEGER,
    server_cpuset=TEXT,
)

# A cell: one host, runtime, case, target beside partner, and metric.
GROUP = TableSchema(host=TEXT, runtime=TEXT, case=TEXT, target=TEXT, partner=TEXT, metric=TEXT)
# One ANOVA / one Tukey family per host, runtime, target and metric.
FAMILY = TableSchema(host=TEXT, runtime=TEXT, target=TEXT, metric=TEXT)
# A ratio with its bootstrap interval against a reference (runtimes.tsv, hosts.tsv).
_RELATIVE = TableSchema(
    n=INTEGER,
    mean=NUMBER,
    reference_n=INTEGER,
    reference_mean=NUMBER,
    relative=NUMBER,
    relative_ci_low=NUMBER,
    relative_ci_high=NUMBER,
    relative_ci_method=TEXT,
    reason=TEXT,
)

SUMMARY = TableSchema(GROUP, DESCRIBED)
INTERFERENCE = TableSchema(
    GROUP,
    unit=TEXT,
    higher_is_better=FLAG,
    mean=NUMBER,
    baseline_mean=NUMBER,
    n=INTEGER,
    baseline_n=INTEGER,
    ir=NUMBER,
    ir_ci_low=NUMBER,
    ir_ci_high=NUMBER,
    ir_ci_method=TEXT,
    ci_level=TEXT,
    ir_se_own=NUMBER,
    ir_se_baseline=NUMBER,
    df_own=NUMBER,
    df_baseline=NUMBER,
    ci_df=NUMBER,
    runs=INTEGER,
    baseline_runs=INTEGER,
    # The paired design (statistics/paired.py): the IR of the separate Case 1 runs kept beside
    # the paired one, and the blocks it had; empty without that design.
    ir_unpaired=NUMBER,
    ir_unpaired_ci_low=NUMBER,
    ir_unpaired_ci_high=NUMBER,
    blocks=NUMBER,
    # The partner's effect alone, with and without it inside each run (the IR itself in Case 3b;
    # in the unlimited cases the IR is this times the limit's effect): paired design only.
    paired_partner_ir=NUMBER,
    paired_partner_ci_low=NUMBER,
    paired_partner_ci_high=NUMBER,
    reason=TEXT,
)
# df is a float: statsmodels' degrees of freedom (and k - 1 of a Kruskal-Wallis row).
ANOVA = TableSchema(
    FAMILY,
    method=TEXT,
    term=TEXT,
    df=NUMBER,
    sum_sq=NUMBER,
    F=NUMBER,
    p=NUMBER,
    partial_eta_sq=NUMBER,
    shapiro_p=NUMBER,
    note=TEXT,
)
POSTHOC = TableSchema(
    FAMILY,
    partner=TEXT,
    group1=TEXT,
    group2=TEXT,
    meandiff=NUMBER,
    p_adj=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    reject=FLAG,
    note=TEXT,
)
RUNTIMES = TableSchema(
    TableSchema(
        host=TEXT,
        target=TEXT,
        metric=TEXT,
        unit=TEXT,
        higher_is_better=FLAG,
        runtime=TEXT,
        reference=TEXT,
    ),
    _RELATIVE,
)
# Two kinds of row in one table: comparison "ir" fills the IR columns, "mean" the mean columns.
PUBLISHED = TableSchema(
    comparison=TEXT,
    paper=TEXT,
    source=TEXT,
    host=TEXT,
    runtime=TEXT,
    case=TEXT,
    target=TEXT,
    partner=TEXT,
    metric=TEXT,
    unit=TEXT,
    ir_from=TEXT,
    paper_ir=NUMBER,
    ir=NUMBER,
    ir_ci_low=NUMBER,
    ir_ci_high=NUMBER,
    direction_paper=INTEGER,
    direction=INTEGER,
    direction_agrees=FLAG,
    ratio=NUMBER,
    in_ci=FLAG,
    verdict=TEXT,
    paper_unit=TEXT,
    paper_mean_printed=NUMBER,
    paper_mean=NUMBER,
    mean=NUMBER,
    here_over_paper=NUMBER,
    paper_cv=NUMBER,
    paper_cv_from=TEXT,
    cv=NUMBER,
)
VARIANCE_COMPONENTS = TableSchema(
    FAMILY,
    cells=INTEGER,
    runs=INTEGER,
    iterations_per_run=NUMBER,
    iteration_var=NUMBER,
    run_var=NUMBER,
    run_share=NUMBER,
    df_iteration=INTEGER,
    df_run=INTEGER,
    iteration_s=NUMBER,
    run_overhead_s=NUMBER,
    run_overhead_from=TEXT,
    recommended_iterations=INTEGER,
    recommended_runs=INTEGER,
    # Each side of an IR apart, as its interval reads them (statistics.TargetComponents): the
    # baseline's (Case 1) and the concurrent cells' (2, 3a, 3b).
    baseline_iteration_var=NUMBER,
    baseline_run_var=NUMBER,
    baseline_df_run=INTEGER,
    concurrent_iteration_var=NUMBER,
    concurrent_run_var=NUMBER,
    concurrent_df_run=INTEGER,
    note=TEXT,
)
FIDELITY = TableSchema(
    paper=TEXT,
    pairings=INTEGER,
    agree=INTEGER,
    share=NUMBER,
    ci_low=NUMBER,
    ci_high=NUMBER,
    rule=TEXT,
    disagreements=TEXT,
)
CASE_CONTRASTS = TableSchema(
    paper=TEXT,
    host=TEXT,
    runtime=TEXT,
    target=TEXT,
    partner=TEXT,
    metric=TEXT,
    case=TEXT,
    against=TEXT,
    paper_difference=NUMBER,
    difference=NUMBER,
    paper_worse=FLAG,
    worse=FLAG,
    agrees=FLAG,
)
WORST_PLACEMENTS = TableSchema(
    paper=TEXT,
    host=TEXT,
    runtime=TEXT,
    target=TEXT,
    metric=TEXT,
    combinations=INTEGER,
    paper_case=TEXT,
    paper_partner=TEXT,
    paper_ir=NUMBER,
    case=TEXT,
    partner=TEXT,
    ir=NUMBER,
    same=FLAG,
)
HOSTS = TableSchema(
    TableSchema(
        runtime=TEXT,
        case=TEXT,
        target=TEXT,
        partner=TEXT,
        metric=TEXT,
        unit=TEXT,
        higher_is_better=FLAG,
        host=TEXT,
        reference_host=TEXT,
    ),
    _RELATIVE,
)
HOST_ANOVA = TableSchema(
    runtime=TEXT, target=TEXT, metric=TEXT, term=TEXT, df=NUMBER, sum_sq=NUMBER, F=NUMBER, p=NUMBER, note=TEXT
)
# The telemetry over an iteration: shares, rates and counters interpolated between samples,
# so a counter may be fractional.
TELEMETRY = TableSchema(
    psi_cpu_some=NUMBER,
    psi_cpu_full=NUMBER,
    psi_memory_some=NUMBER,
    psi_memory_full=NUMBER,
    psi_io_some=NUMBER,
    psi_io_full=NUMBER,
    ctxt_per_s=NUMBER,
    steal_cores=NUMBER,
    cpu_cores=NUMBER,
    throttled=NUMBER,
    nr_throttled=NUMBER,
    memory_failcnt=NUMBER,
    oom_kill=NUMBER,
)
CONTENTION_KEYS = TableSchema(
    host=TEXT,
    runtime=TEXT,
    case=TEXT,
    target=TEXT,
    partner=TEXT,
    member=INTEGER,
    repetition=INTEGER,
    iteration=INTEGER,
    metric=TEXT,
)
CONTENTION = TableSchema(CONTENTION_KEYS, TableSchema(value=NUMBER, relative=NUMBER), TELEMETRY)
# Per host, runtime and case: the telemetry's shares and rates averaged over the measured
# iterations, its counters summed (iteration_telemetry.by_case).
CONTENTION_BY_CASE = TableSchema(
    host=TEXT,
    runtime=TEXT,
    case=TEXT,
    n_iterations=INTEGER,
    psi_cpu_some=NUMBER,
    psi_cpu_full=NUMBER,
    psi_memory_some=NUMBER,
    psi_io_some=NUMBER,
    throttled=NUMBER,
    ctxt_per_s=NUMBER,
    steal_cores=NUMBER,
    nr_throttled=NUMBER,
    memory_failcnt=NUMBER,
    oom_kill=NUMBER,
)
PRESSURE_CORRELATION = TableSchema(host=TEXT, runtime=TEXT, target=TEXT, n=INTEGER, rho=NUMBER, p=NUMBER)
SPLIT = TableSchema(
    GROUP,
    unit=TEXT,
    higher_is_better=FLAG,
    n=INTEGER,
    baseline_n=INTEGER,
    unlimited_n=INTEGER,
    partner_baseline=TEXT,
    total_ir=NUMBER,
    total_ci_low=NUMBER,
    total_ci_high=NUMBER,
    limit_ir=NUMBER,
    limit_ci_low=NUMBER,
    limit_ci_high=NUMBER,
    partner_ir=NUMBER,
    partner_ci_low=NUMBER,
    partner_ci_high=NUMBER,
    opposed=TEXT,
    reason=TEXT,
)
DRIFT = TableSchema(
    FAMILY,
    unit=TEXT,
    higher_is_better=FLAG,
    first_mean=NUMBER,
    end_mean=NUMBER,
    first_n=INTEGER,
    end_n=INTEGER,
    change=NUMBER,
    change_ci_low=NUMBER,
    change_ci_high=NUMBER,
    ci_method=TEXT,
    hours_between=NUMBER,
    first_steal_cores=NUMBER,
    end_steal_cores=NUMBER,
    reason=TEXT,
)
