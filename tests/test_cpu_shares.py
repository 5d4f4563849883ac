"""The CPU-share model (issue 55, item 1): the scheduler's shares by hand, the speed curve, the
IR's orientation, the quota sweep's run keys and runner, and cpu_speed.tsv by hand."""

import numpy as np
import pandas as pd
import pytest
from interference import studies
from interference.steps.config import ConfigError, validate
from interference.studies.profiling import cpu_shares, plan
from interference.studies.profiling.cpu_shares import SpeedCurve, ir_of, shares, water_fill
from interference.studies.profiling.cpu_speed import cpu_speed, orient, threads_of
from interference.studies.profiling.parse import SAMPLE_COLUMNS
from test_profiling_study import STUDY, run_recorded


# -- the scheduler's shares, by hand ------------------------------------------------------------
@pytest.mark.parametrize(
    "capacity,demands,weights,expected",
    [
        (2, [2, 1], [1, 1], [1, 1]),  # L beside Y apart: a core each
        (2, [2, 0.3], [1, 1], [1.7, 0.3]),  # what NR leaves goes to L
        (2, [2, 1], [2, 1], [4 / 3, 2 / 3]),  # one container: per thread, L's two against Y's one
        (1, [1, 1, 1], [1, 1, 1], [1 / 3] * 3),
        (2, [0.2, 0.5], [1, 1], [0.2, 0.5]),  # all satisfied, capacity left over
        (2, [1.5, 1.5, 0.2], [1, 1, 1], [0.9, 0.9, 0.2]),
        (2, [0, 2], [1, 1], [0, 2]),
    ],
)
def test_water_fill_by_hand(capacity, demands, weights, expected):
    assert water_fill(capacity, demands, weights) == pytest.approx(expected)


def test_shares_go_to_containers_first_then_to_threads_inside():
    demand = {"L": 2.0, "Y": 1.0, "NR": 0.3}
    threads = {"L": 2, "Y": 1, "NR": 1}
    # Case 3a, L beside Y: a container a core.
    assert shares([["L"], ["Y"]], demand, threads, 2) == [[pytest.approx(1)], [pytest.approx(1)]]
    # Case 2, both in one container: 2 of 3 threads are L's.
    (inside,) = shares([["L", "Y"]], demand, threads, 2)
    assert inside == pytest.approx([4 / 3, 2 / 3])
    # Case 2-3a: L and Y share a container, NR apart takes its 0.3, the rest is theirs.
    together, (nr,) = shares([["L", "Y"], ["NR"]], demand, threads, 2)
    assert nr == pytest.approx(0.3) and together == pytest.approx([1.7 * 2 / 3, 1.7 / 3])


def curve(speeds, case1, demand=2.0, threads=2, ci=0.0):
    cores = np.array([0.5, 1, 1.5, 2])
    speed = np.array(speeds, float)
    draws = speed + ci * np.random.default_rng(1).standard_normal((400, 4))
    return SpeedCurve(cores, speed, draws, case1, np.full(400, case1), demand, threads)


def test_speed_curve_is_linear_through_zero_monotone_and_held():
    c = curve([0.3, 0.5, 0.9, 1.0], case1=0.55)
    assert c.at(0.25)[0] == pytest.approx(0.15)  # half-way to the first quota, from (0, 0)
    assert c.at(1.25)[0] == pytest.approx(0.7)
    assert c.at(3)[0] == pytest.approx(1.0)  # held beyond every core
    dip = curve([0.3, 0.6, 0.5, 1.0], case1=0.55)  # a dip is noise: pooled to 0.55, 0.55
    assert dip.at(1)[0] == pytest.approx(0.55) and dip.at(1.5)[0] == pytest.approx(0.55)


def test_ir_of_a_speed_ratio_has_relative_changes_orientation():
    # Twice as fast: a rate doubles (+100 %), a time halves ((b - x)/b = +50 %).
    assert ir_of(2.0, True) == pytest.approx(1.0) and ir_of(2.0, False) == pytest.approx(0.5)
    # Half as fast: a rate halves (-50 %), a time doubles (-100 %).
    assert ir_of(0.5, True) == pytest.approx(-0.5) and ir_of(0.5, False) == pytest.approx(-1.0)


def test_a_unit_is_predicted_from_its_share_and_case_1():
    curves = {
        ("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], case1=0.55),
        ("Y", "total_time"): curve([0.5, 1.0, 1.0, 1.0], case1=1.0, demand=1.0, threads=1),
    }
    units = pd.DataFrame(
        [
            ("3a", "L", "Y", "gflops", True),
            ("2", "Y", "L", "total_time", False),
            ("3b", "L", "Y", "gflops", True),
            ("3a", "L", "NR", "gflops", True),
        ],
        columns=["case", "target", "partner", "metric", "higher_is_better"],
    )
    got = cpu_shares.predict_units(curves, units, cores=2).set_index(["case", "target", "partner"])
    # 3a: L gets one core of two, speed 0.5 against Case 1's 0.55.
    assert got.loc[("3a", "L", "Y"), "share"] == pytest.approx(1)
    assert got.loc[("3a", "L", "Y"), "ir"] == pytest.approx(0.5 / 0.55 - 1)
    # 2: Y gets a third of two cores (a thread of three), speed 2/3 of 1u; a time: 1 - 1/ratio.
    assert got.loc[("2", "Y", "L"), "share"] == pytest.approx(2 / 3)
    assert got.loc[("2", "Y", "L"), "ir"] == pytest.approx(1 - 1 / (2 / 3))
    assert got.loc[("3b", "L", "Y"), "ir"] == 0 and "Case 3b" in got.loc[("3b", "L", "Y"), "reason"]
    nr = got.loc[("3a", "L", "NR")]
    assert np.isnan(nr.ir) and nr.reason == "no CPU profile of NR"


def test_the_interval_holds_the_point_and_widens_with_the_profiles_noise():
    units = pd.DataFrame([("3a", "L", "L", "gflops", True)], columns=["case", "target", "partner", "metric",
                                                                      "higher_is_better"])  # fmt: skip
    narrow = cpu_shares.predict_units({("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], 0.55, ci=0.01)}, units, 2)
    wide = cpu_shares.predict_units({("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], 0.55, ci=0.05)}, units, 2)
    for t in (narrow, wide):
        assert t.ir_low.iloc[0] < t.ir.iloc[0] < t.ir_high.iloc[0]
    assert (wide.ir_high - wide.ir_low).iloc[0] > 3 * (narrow.ir_high - narrow.ir_low).iloc[0]


# -- the quota sweep's runs ----------------------------------------------------------------------
def test_quota_runs_have_keys_that_read_back_and_settings_with_the_quota():
    cfg = validate({"runtimes": ["docker"], "studies": {"profiling": {
        "microservices": ["L"], "resources": [], "placements": [], "quotas": [0.5, 1]}}}, machine=False)  # fmt: skip
    keys = [r.key for r in STUDY.runs(cfg["studies"]["profiling"])]
    assert keys == ["1/L/alone", "1u/L/alone", "1q/L/quota-0.5", "1q/L/quota-1"]  # no bubble, no probe
    assert STUDY.run_of("1q/L/quota-0.5") == plan.ProfilingRun("1q", "L", quota=0.5)
    s = studies.run_settings(cfg, "profiling", "docker", "1q/L/quota-0.5", 1)
    assert s["quota"] == 0.5 and s["iterations"] == 3 and "limits" not in s
    assert "limit:cpus" in STUDY.needs(cfg["studies"]["profiling"])


def test_a_quota_above_the_hosts_cores_is_refused():
    with pytest.raises(ConfigError, match="quotas has 64 cores, but this host has"):
        validate({"runtimes": ["docker"], "studies": {"profiling": {"quotas": [64]}}}, machine=False)


def test_a_quota_run_gives_every_core_and_a_cfs_quota(tmp_path):
    rt, _, meta, rows = run_recorded(tmp_path, "1q/L/quota-0.5", microservices=["L"], quotas=[0.5],
                                     iterations=2)  # fmt: skip
    assert [s.image for s in rt.started] == ["id-L", "id-L"] and rt.removed == [s.name for s in rt.started]
    assert all(s.cpus == 0.5 and s.cpuset is None and s.memory is None for s in rt.started)
    assert rows["quota"].eq(0.5).all() and rows["case"].eq("1q").all() and meta["n_failed"] == 0


# -- cpu_speed.tsv by hand ------------------------------------------------------------------------
def sweep_samples(tmp_path, rows) -> dict:
    out = []
    for case, quota, metric, higher, values, cpu in rows:
        for i, v in enumerate(values, 1):
            out.append(dict(host="h", runtime="docker", case=case, target="L", resource="", intensity="",
                            partner="", repetition=1, iteration=i, metric=metric, value=v, unit="u",
                            higher_is_better=higher, in_overlap=True, start=0, end=1, status="ok", quota=quota,
                            own_cpu_cores=cpu))  # fmt: skip
    path = tmp_path / "samples.tsv"
    pd.DataFrame(out, columns=SAMPLE_COLUMNS).to_csv(path, sep="\t", index=False)
    return {"samples": path}


def test_cpu_speed_is_the_mean_against_case_1u_oriented_faster_above_1(tmp_path):
    inputs = sweep_samples(tmp_path, [
        ("1u", "", "gflops", True, [10, 12], 1.9),
        ("1q", "0.5", "gflops", True, [2.5, 3.5], 0.5),
        ("1", "", "gflops", True, [6, 5], 1.0),
        ("1u", "", "seconds", False, [1.0, 1.2], 1.9),
        ("1q", "0.5", "seconds", False, [4.0, 4.8], 0.5),
        ("1", "", "seconds", False, [2.0, 2.4], 1.0),
    ])  # fmt: skip
    t = cpu_speed(inputs, 1, cores=2).set_index(["metric", "case"])
    assert t.loc[("gflops", "1q"), "speed"] == pytest.approx(3 / 11)
    assert t.loc[("gflops", "1"), "speed"] == pytest.approx(5.5 / 11)
    assert t.loc[("seconds", "1q"), "speed"] == pytest.approx(1.1 / 4.4)  # a time: 1u's over its own
    assert t.loc[("gflops", "1u"), "speed"] == 1 and t.loc[("gflops", "1u"), "cores"] == 2
    assert t.loc[("gflops", "1q"), "cores"] == 0.5 and np.isnan(t.loc[("gflops", "1"), "cores"])
    assert (t["threads"] == 2).all() and t.loc[("gflops", "1q"), "cpu_cores"] == pytest.approx(0.5)
    for _, r in t.iterrows():
        assert r.ci_low <= r.speed <= r.ci_high


def test_orient_inverts_a_times_interval_and_threads_round_the_demand():
    assert orient(-0.5, -0.6, -0.4, True) == pytest.approx((0.5, 0.4, 0.6))
    assert orient(1.0, 0.5, 2.0, False) == pytest.approx((0.5, 1 / 3, 1 / 1.5))
    assert [threads_of(x) for x in (0.2, 0.97, 1.9, float("nan"))] == [1, 1, 2, 1]


def test_no_quota_swept_no_rows(tmp_path):
    inputs = sweep_samples(tmp_path, [("1u", "", "gflops", True, [10, 12], 1.9)])
    assert cpu_speed(inputs, 1).empty


def test_a_member_given_all_it_wants_runs_as_alone_and_unlimited():
    # NR wants 0.14 of a core: beside L it gets it, so it runs as in 1u (speed 1), and its IR is
    # the limit's removal alone: 1u against its Case 1 (speed 0.5 there).
    curves = {
        ("NR", "transactions"): curve([0.7, 0.5, 0.6, 1.0], case1=0.5, demand=0.14, threads=1),
        ("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], case1=0.55),
    }
    units = pd.DataFrame([("2", "NR", "L", "transactions", True), ("3a", "L", "NR", "gflops", True)],
                         columns=["case", "target", "partner", "metric", "higher_is_better"])  # fmt: skip
    nr, l_ = cpu_shares.predict_units(curves, units, cores=2).itertuples()
    assert nr.share == pytest.approx(0.14) and nr.ir == pytest.approx(1 / 0.5 - 1)
    assert nr.ir_low == nr.ir_high == pytest.approx(1.0)  # Case 1's speed drawn exact here (no CI)
    assert l_.share == pytest.approx(1.86) and l_.ir == pytest.approx(c_at(1.86) / 0.55 - 1)


def c_at(c):
    return np.interp(c, [0, 0.5, 1, 1.5, 2], [0, 0.3, 0.5, 0.9, 1.0])


def test_in_case_2_3a_the_member_apart_has_a_container_and_the_two_others_share_one():
    y = curve([0.5, 1.0, 1.0, 1.0], case1=1.0, demand=1.0, threads=1)
    curves = {("Y", "t"): y, ("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], case1=0.55)}
    units = pd.DataFrame([("2-3a", "Y", "L+Y", "t", False), ("2-3a", "Y", "Y|L", "t", False)],
                         columns=["case", "target", "partner", "metric", "higher_is_better"])  # fmt: skip
    apart, sharing = cpu_shares.predict_units(curves, units, cores=2).itertuples()
    # Apart: a container of its own against L+Y's: one core each, all Y wants.
    assert apart.share == pytest.approx(1.0) and apart.ir == pytest.approx(0.0)
    # Sharing with Y, L apart: each container a core; inside, Y's two copies half a core each.
    assert sharing.share == pytest.approx(0.5) and sharing.ir == pytest.approx(1 - 1 / 0.5)


def test_the_section_shows_each_microservices_demand_threads_and_speeds_from_the_table(tmp_path):
    from interference.rendering.document import Document
    from interference.studies.profiling.section import Profiling

    stats = tmp_path / "stats"
    (stats / "profiling").mkdir(parents=True)
    pd.DataFrame(
        {"key": ["1/L/alone", "1u/L/alone", "1q/L/quota-0.5", "1k/L/busy-2"], "repetition": 1}
    ).to_csv(stats / "profiling/runs.tsv", sep="\t", index=False)

    def shown(speed_at_half: float, busy_speed: float = 0.12) -> tuple[str, str]:
        rows = [("1u", 2, None, 1.0, 1.9), ("1", None, None, 0.58, 1.0), ("1q", 0.5, None, speed_at_half, 0.5),
                ("1k", 2 / 3, 2, busy_speed, 0.7)]  # fmt: skip
        pd.DataFrame([dict(host="h", runtime="docker", microservice="L", metric="gflops", case=c, cores=k, busy=b,
                           speed=v, ci_low=v, ci_high=v, cpu_cores=u, threads=2, runs=1, ci_level="", reason="")
                      for c, k, b, v, u in rows]).to_csv(stats / "profiling/cpu_speed.tsv", sep="\t", index=False)  # fmt: skip
        section = Profiling(Document(stats, None, "test", "profiling"))
        return section.method()[0].content, "\n".join(b.content for b in section.tables())

    method, table = shown(0.25)
    assert "1 of them a microservice alone under a CPU quota" in method and "probe Q" not in method
    assert "The busy sweep: 1 of them a microservice unlimited" in method
    assert "quota 0.50" in table and "0.25" in table and "1.90" in table and "L (gflops)" in table
    assert "beside 2 busy" in table and "0.12 at 0.67" in table
    assert "0.31" in shown(0.31)[1] and "0.25" not in shown(0.31)[1]
    assert "0.09 at 0.67" in shown(0.25, 0.09)[1]


# -- the correction learnt from another session's pairs (item 3), by hand ---------------------------
def test_the_correction_is_its_layouts_mean_residual_without_its_targets_own_pairs():
    from interference.studies.profiling import cpu_correction

    threads = {"L": 2, "S": 2, "Y": 1, "P": 1, "NS": 1}
    cols = ["case", "target", "partner", "metric", "ir_measured", "ir_predicted"]
    training = pd.DataFrame(
        [
            ("3a", "Y", "L", "t", -0.20, 0.0),  # layout (3a, apart, 1 thread, 2 beside)
            ("3a", "Y", "L", "u", -0.30, 0.0),  # the same unit's second metric: its mean is -0.25
            ("3a", "P", "L", "t", -0.30, 0.0),
            ("3a", "NS", "S", "t", -0.10, -0.05),  # residual -0.05
            ("2", "Y", "L", "t", -0.50, -0.50),  # another layout (together)
        ],
        columns=cols,
    )
    learnt = cpu_correction.residuals(training, threads).set_index(["case", "target", "partner"])
    assert learnt.loc[("3a", "Y", "L"), "residual"] == pytest.approx(-0.25)
    assert learnt.loc[("3a", "Y", "L"), "layout"] == ("3a", False, 1, 2)
    predicted = pd.DataFrame(
        [("3a", "Y", "L", "t", 0.0, -0.1, 0.1, 1.0, ""), ("3a", "P", "S", "t", 0.0, -0.1, 0.1, 1.0, ""),
         ("3b", "Y", "L", "t", 0.0, 0.0, 0.0, np.nan, "")],
        columns=cpu_shares.PREDICTION_COLUMNS,
    )  # fmt: skip
    out = cpu_correction.corrected(predicted, learnt.reset_index(), threads)
    # Y beside L: its own pairs held out, P|L (-0.30) and NS|S (-0.05) remain: -0.175.
    assert out.ir[0] == pytest.approx(-0.175) and out.ir_low[0] == pytest.approx(-0.275)
    assert "2 unit(s) of its layout without Y" in out.reason[0]
    # P beside S: Y|L (-0.25) and NS|S (-0.05); P|L is P's own.
    assert out.correction[1] == pytest.approx(-0.15)
    # No 3b unit was learnt: not corrected, and said so.
    assert out.ir[2] == 0 and "not corrected" in out.reason[2]


# -- the advice by the CPU-share model, and how sure it is (item 5) ------------------------------------
def test_advice_by_cpu_shares_ranks_by_hand_and_says_how_sure_it_is():
    from interference.studies.profiling.advise import advise, cpu_total, placements

    curves = {
        ("L", "gflops"): curve([0.3, 0.5, 0.9, 1.0], case1=0.55, ci=0.01),
        ("Y", "t"): curve([0.5, 1.0, 1.0, 1.0], case1=1.0, demand=1.0, threads=1, ci=0.01),
    }
    metrics, higher = {"L": "gflops", "Y": "t"}, {"L": True, "Y": False}
    by = {(p.label, p.limited): p for p in placements(["L", "Y"])}
    # Apart and limited: each on its Case 1 core, 0 for both. Together, unlimited: L's two threads
    # and Y's one share 2 cores: L 4/3 (speed 0.5 + (1/3)·0.8 = 0.7667), Y 2/3 (speed 2/3).
    assert cpu_total(curves, by["L | Y", True], metrics, higher, 2)["total_slowdown"] == 0
    together = cpu_total(curves, by["L+Y", False], metrics, higher, 2)["total_slowdown"]
    assert together == pytest.approx(-((0.5 + 0.8 / 3) / 0.55 - 1) - (1 - 1 / (2 / 3)))

    def table(sd):
        total = lambda p: cpu_total(curves, p, metrics, higher, 2)  # noqa: E731
        return advise(None, ["L", "Y"], metrics, 2, 4.0, 1.0, total_of=total, model_sd=sd)

    sure, unsure = table(None), table(0.25)
    ranked = sure[sure["rank"].notna()]
    assert ranked["p_best"].sum() == pytest.approx(1) and unsure["p_best"].sum() == pytest.approx(1)
    assert ranked.iloc[0].placement == "L | Y" and ranked.iloc[0].limited  # 0 beats L's loss apart
    assert pd.isna(ranked.iloc[0].indistinguishable_from_first)  # the first is not compared with itself
    # The model's error widens every interval and makes the first pick less sure.
    width = lambda t: (t.slowdown_high - t.slowdown_low).dropna()  # noqa: E731
    assert (width(unsure).to_numpy() > width(sure).to_numpy() + 0.3).all()
    assert unsure["p_best"].max() < ranked["p_best"].max()
    assert unsure["indistinguishable_from_first"].dropna().all()


# -- the busy sweep: the speed at a share among spinning neighbours ------------------------------
def test_busy_runs_read_back_and_start_their_spinners_before_the_first_iteration(tmp_path):
    cfg = validate({"runtimes": ["docker"], "studies": {"profiling": {
        "microservices": ["L"], "resources": [], "placements": [], "busy": [1, 2]}}}, machine=False)  # fmt: skip
    keys = [r.key for r in STUDY.runs(cfg["studies"]["profiling"])]
    assert keys == ["1/L/alone", "1u/L/alone", "1k/L/busy-1", "1k/L/busy-2"]
    assert STUDY.run_of("1k/L/busy-2") == plan.ProfilingRun("1k", "L", busy=2)
    assert STUDY.run_images(cfg["studies"]["profiling"], "1k/L/busy-2") == ["L", "X"]
    rt, ctx, meta, rows = run_recorded(tmp_path, "1k/L/busy-2", microservices=["L"], busy=[2], iterations=2)
    images = [s.image for s in rt.started]
    assert images == ["id-X", "id-X", "id-L", "id-L"]  # the neighbours first, then a fresh L each iteration
    for spinner in rt.started[:2]:
        assert spinner.env["BUBBLE_RESOURCE"] == "cpu" and spinner.env["BUBBLE_INTENSITY"] == "1"
        assert int(spinner.env["BUBBLE_SECONDS"]) >= 2 * 300  # past the last iteration's timeout
        assert (
            spinner.limits() == {"cpuset": None, "cpus": None, "memory": None}
            and spinner.labels == ctx.labels
        )
    assert all(s.limits() == {"cpuset": None, "cpus": None, "memory": None} for s in rt.started[2:])
    assert rows["busy"].eq(2).all() and rows["case"].eq("1k").all() and meta["n_failed"] == 0


def test_a_busy_sweep_of_no_neighbours_is_refused_with_its_key():
    with pytest.raises(ConfigError, match="studies.profiling.busy"):
        validate({"runtimes": ["docker"], "studies": {"profiling": {"busy": [0]}}}, machine=False)


def test_cpu_speed_puts_a_busy_run_at_the_share_the_scheduler_gives_it(tmp_path):
    rows = [
        ("1u", "", "gflops", True, [10, 12], 1.9),
        ("1", "", "gflops", True, [6, 5], 1.0),
        ("1k", "", "gflops", True, [4, 5], 0.8),
        ("1k", "", "gflops", True, [2, 3], 0.6),
    ]
    inputs = sweep_samples(tmp_path, rows)
    samples = pd.read_csv(inputs["samples"], sep="\t")
    samples["busy"] = [""] * 4 + [1, 1, 2, 2]
    samples.to_csv(inputs["samples"], sep="\t", index=False)
    t = cpu_speed(inputs, 1, cores=2).set_index(["case", "busy"], drop=False)
    # Demand 1.9 against one neighbour wanting a core: a core each; against two: 2/3 each.
    assert t.loc[("1k", 1), "cores"] == pytest.approx(1.0) and t.loc[("1k", 2), "cores"] == pytest.approx(
        2 / 3
    )
    assert t.loc[("1k", 1), "speed"] == pytest.approx(4.5 / 11) and t.loc[
        ("1k", 2), "speed"
    ] == pytest.approx(2.5 / 11)
    assert t[t.case == "1u"]["busy"].isna().all()


def sweep_table(ms="S", metric="triad"):
    common = dict(
        microservice=ms, metric=metric, cpu_cores=1.9, threads=2, runs=1, ci_level="iterations", reason=""
    )
    rows = [common | dict(case="1u", cores=2.0, busy=np.nan, speed=1.0, ci_low=1.0, ci_high=1.0),
            common | dict(case="1", cores=np.nan, busy=np.nan, speed=0.5, ci_low=0.5, ci_high=0.5),
            common | dict(case="1q", cores=2 / 3, busy=np.nan, speed=0.9, ci_low=0.9, ci_high=0.9),
            common | dict(case="1k", cores=1.0, busy=1, speed=0.6, ci_low=0.6, ci_high=0.6),
            common | dict(case="1k", cores=2 / 3, busy=2, speed=0.3, ci_low=0.3, ci_high=0.3),
            common | dict(case="1k", cores=2 / 3, busy=3, speed=0.2, ci_low=0.2, ci_high=0.2)]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_busy_curve_reads_only_the_busy_sweep_and_averages_points_at_one_share():
    quota = cpu_shares.curves(sweep_table(), n_draws=50)[("S", "triad")]
    busy = cpu_shares.curves(sweep_table(), n_draws=50, sweep="1k")[("S", "triad")]
    assert quota.at(2 / 3)[0] == pytest.approx(0.9)
    assert list(busy.cores) == pytest.approx([2 / 3, 1.0, 2.0]) and busy.at(2 / 3)[0] == pytest.approx(0.25)
    assert busy.at(1.5)[0] == pytest.approx(0.6 + 0.5 * 0.4)  # halfway from (1, 0.6) to 1u's (2, 1)
    # S in a triple's three unlimited containers on 2 cores: 2/3 of a core; its IR against Case 1's 0.5.
    row = cpu_shares.predict_unit({("S", "triad"): busy, **{(m, "x"): quota_like(m) for m in ("L", "Y")}},
                                  "3a", "S", "L|Y", "triad", 2, True)  # fmt: skip
    assert row["share"] == pytest.approx(2 / 3) and row["ir"] == pytest.approx(0.25 / 0.5 - 1)


def quota_like(ms):
    """A one-thread member that wants a whole core."""
    return SpeedCurve(cores=np.array([1.0, 2.0]), speed=np.array([1.0, 1.0]), speed_draws=np.ones((50, 2)),
                      case1=1.0, case1_draws=np.ones(50), demand=1.0, threads=1)  # fmt: skip


# -- profiles of several sessions, pooled ------------------------------------------------------
def speed_row(case, speed, low, high, cores=np.nan, busy=np.nan, cpu=1.0, ms="Y"):
    return dict(microservice=ms, metric="computation_time", case=case, cores=cores, busy=busy, speed=speed,
                ci_low=low, ci_high=high, cpu_cores=cpu, threads=1, runs=1, ci_level="iterations",
                reason="one run")  # fmt: skip


def test_sessions_pool_point_by_point_on_the_log_scale():
    from interference.findings.pooling import random_effects
    from interference.studies.profiling.pooled_speed import pooled

    z = np.exp(0.1)  # each interval ×/÷ e^0.1: the same SE on the log scale in both sessions
    a = pd.DataFrame([speed_row("1", 0.6, 0.6 / z, 0.6 * z), speed_row("1u", 1, 1, 1, cores=2),
                      speed_row("1k", 0.8, 0.8 / z, 0.8 * z, cores=0.99, busy=1, cpu=0.9),
                      speed_row("1q", 0.5, 0.45, 0.55, cores=0.5)])  # fmt: skip
    b = pd.DataFrame([speed_row("1", 1.2, 1.2 / z, 1.2 * z), speed_row("1u", 1, 1, 1, cores=2),
                      speed_row("1k", 0.9, 0.9 / z, 0.9 * z, cores=0.97, busy=1, cpu=0.8)])  # fmt: skip
    t = pooled([a, b]).set_index("case")
    assert len(t) == 4
    # Equal SEs weigh the sessions equally whatever the between-session variance: the geometric mean.
    assert t.loc["1", "speed"] == pytest.approx(np.sqrt(0.6 * 1.2))
    assert t.loc["1k", "speed"] == pytest.approx(np.sqrt(0.8 * 0.9))
    # Its interval is the random-effects one on log speed (HKSJ, t with 1 df): wider than both.
    p = random_effects(np.log([0.6, 1.2]), np.log([0.6 / z, 1.2 / z]), np.log([0.6 * z, 1.2 * z]))
    assert (t.loc["1", "ci_low"], t.loc["1", "ci_high"]) == pytest.approx((np.exp(p.low), np.exp(p.high)))
    assert t.loc["1", "ci_low"] < 0.6 / z and t.loc["1", "ci_high"] > 1.2 * z
    assert t.loc["1", "ci_level"] == "sessions" and "2 sessions" in t.loc["1", "reason"]
    # A busy point is the number of neighbours: its share and CPU use are the sessions' mean.
    assert t.loc["1k", ["cores", "cpu_cores"]].tolist() == pytest.approx([0.98, 0.85])
    # 1u is 1 by definition; a point one session measured is that session's.
    assert t.loc["1u", ["speed", "ci_low", "ci_high"]].tolist() == [1, 1, 1]
    assert t.loc["1q", ["speed", "ci_low", "ci_high"]].tolist() == [0.5, 0.45, 0.55]
    assert pooled([a]) is a  # one session: its own table
    # A table from before the busy sweep has no busy column: it pools all the same, busy kept.
    old = a[a["case"] != "1k"].drop(columns="busy")
    t = pooled([old, b]).set_index("case")
    assert t.loc["1k", "busy"] == 1 and t.loc["1", "speed"] == pytest.approx(np.sqrt(0.6 * 1.2))
