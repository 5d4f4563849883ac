"""The power a plan buys (findings.power) and the price of a verdict (steps/verdict_price.py),
each against an independent calculation: a hand computation for one cell, the real verdict rule
(claims.judge_claim) fed the same simulated cells, and hand-pooled variance components."""

import math

import numpy as np
import pandas as pd
import pytest
from interference.findings import verdict as v
from interference.findings.claims import judge_claim
from interference.findings.inference import RUNS, CellEstimate, mean_of
from interference.findings.power import Cells, p_reproduced
from interference.findings.verdict import Band
from interference.steps import verdict_price
from scipy import stats

MC = 0.03  # 4000 draws: the share's standard error is at most 0.008


def one_cell(mu=-0.21, var=0.004, df=np.inf, lower=False) -> Cells:
    rho = 1 - mu if lower else 1 + mu
    d = np.array([df])
    return Cells(np.array([mu]), np.array([rho]), np.array([0]), np.array([var]), np.array([var / 2]), d, d)


def test_one_cell_against_a_hand_computation():
    """With the variances known (infinite df), shown above an edge at 5 %: the estimate must
    exceed low + z(0.95)·se; it is normal about mu with that se, so the probability is
    Φ((mu - low)/se - z). Where lower is better the ratio is 1 - mu: a wider se."""
    se = 0.79 * math.sqrt(0.004 + 0.002)
    hand = stats.norm.cdf((-0.21 + 0.30) / se - stats.norm.ppf(0.95))
    assert p_reproduced(one_cell(), Band(low=-0.30), "mean") == pytest.approx(hand, abs=MC)
    se_low = 1.21 * math.sqrt(0.004 + 0.002)
    hand_low = stats.norm.cdf((-0.21 + 0.30) / se_low - stats.norm.ppf(0.95))
    assert p_reproduced(one_cell(lower=True), Band(low=-0.30), "mean") == pytest.approx(hand_low, abs=MC)
    # Both edges (TOST, "about"): Φ(a) - Φ(-a) with a = 0.09/se - z, by hand (less precise
    # variances, so that it can pass).
    a = 0.09 / (0.79 * math.sqrt(0.0015)) - stats.norm.ppf(0.95)
    tost = stats.norm.cdf(a) - stats.norm.cdf(-a)
    assert p_reproduced(one_cell(var=0.001), Band(-0.30, -0.12), "about") == pytest.approx(tost, abs=MC)
    # Estimated variances (3 df a side) cost power against known ones; no df at all: no verdict.
    assert p_reproduced(one_cell(df=3.0), Band(low=-0.30), "mean") < hand - MC
    assert p_reproduced(one_cell(df=0.0), Band(low=-0.30), "mean") == 0.0


def as_estimates(draws, j: int) -> tuple[CellEstimate, ...]:
    """The j-th simulated measurement as the tables' cells: its estimates, each cell's
    estimated own variance and its target's baseline as a shared loading (source and df), the
    target's concurrent components as the group (so the real rule's mean pools them itself)."""
    c = draws.cells
    se, df = draws.cell_se_df()
    own, load = draws.own()[j], draws.loading()[j]
    out = []
    for i, (est, t) in enumerate(zip(draws.x[j], c.target)):
        shared = ((("baseline", int(t)), load[i], c.df_base[t]),)
        out.append(CellEstimate(f"c{i}", est, est - 2 * se[j, i], est + 2 * se[j, i], se[j, i], df[j, i], RUNS,
                                shared, ("t", int(t)), c.df_cell[t]))  # fmt: skip
    assert np.allclose([x.own_var for x in out], own)
    return tuple(out)


@pytest.mark.parametrize(
    "quantifier, band, mu, target",
    [
        ("every", Band(low=-0.2), [-0.05, 0.10, -0.12], [0, 0, 1]),
        ("some", Band(low=0.0), [0.03, 0.24], [0, 0]),
        ("most", Band(high=-0.05), [-0.31, -0.12, -0.02], [0, 1, 1]),
        ("mean", Band(low=-0.05), [0.015, 0.024], [0, 1]),
        ("mean", Band(high=-0.05), [-0.60, -0.38, -0.41], [0, 0, 0]),
        ("about", Band(-0.6, -0.28), [-0.36, -0.60], [0, 0]),
    ],
)
def test_the_vectorised_rule_agrees_with_the_real_verdict_rule(quantifier, band, mu, target):
    """The same simulated measurements judged by claims.judge_claim, one by one: for a mean,
    the real rule computes its SE and Satterthwaite df from the cells' pieces (inference.linear)."""
    mu, target = np.array(mu), np.array(target)
    k = target.max() + 1
    cells = Cells(mu, 1 + mu, target, np.full(len(mu), 0.004), np.array([0.002, 0.003])[:k],
                  np.array([4.0, 6.0])[:k], np.array([2.0, 5.0])[:k])  # fmt: skip
    draws = cells.draws(400, seed=3)

    def verdict(j):
        cs = as_estimates(draws, j)
        m = v.Measure.of(mean_of(cs), "sim", 30, cells=len(cs), by_cell=cs)
        return judge_claim(m, band, quantifier).verdict == v.REPRODUCED

    real = np.mean([verdict(j) for j in range(400)])
    assert p_reproduced(cells, band, quantifier, n=400, seed=3) == pytest.approx(real, abs=1e-9)


def test_the_price_is_the_least_factor_whose_power_reaches_the_target():
    """One cell, by hand with known variances (the simulation's own χ² draws are checked above):
    at factor F the runs are ceil(3F) baselines and ceil(2F) concurrent; the power is TOST's."""
    noise = verdict_price.Noise({"L": 0.004}, {"L": 0.006}, {"L": "test"})
    cfg = {"iterations": 3, "repetitions": {"1": 3, "2": 2}, "cases": ["1", "2"]}
    paper = pd.Series({("2", "L", "L"): -0.21})
    band = Band(-0.30, -0.12)

    def hand_power(f):
        b, r = math.ceil(3 * f - 1e-9), math.ceil(2 * f - 1e-9)
        var = 0.004 + 0.006 / 3
        a = 0.09 / (0.79 * math.sqrt(var / r + var / b)) - stats.norm.ppf(0.95)
        return stats.norm.cdf(a) - stats.norm.cdf(-a)

    got = verdict_price.price(paper, band, "about", cfg, noise, 0.8)
    cells = verdict_price.cells_at(paper, cfg, got.factor, noise)
    assert list(cells.df_cell) == [math.ceil(2 * got.factor - 1e-9) - 1]
    assert list(cells.df_base) == [math.ceil(3 * got.factor - 1e-9) - 1]
    # Estimated variances need at least the runs known ones would: the factor is no smaller.
    assert got.decides and got.power >= 0.8 and hand_power(got.factor) >= 0.8
    smaller = [f for f in verdict_price.FACTORS if f < got.factor]
    assert not smaller or verdict_price.p_reproduced(verdict_price.cells_at(paper, cfg, smaller[-1], noise),
                                                      band, "about") < 0.8  # fmt: skip
    assert got.power_at_one == pytest.approx(
        verdict_price.p_reproduced(verdict_price.cells_at(paper, cfg, 1.0, noise), band, "about")
    )
    # Y's times: lower is better, so its ratio is 1 - IR: a wider interval than L's at one IR.
    noise_y = verdict_price.Noise({"Y": 0.004}, {"Y": 0.006}, {"Y": "test"})
    y = verdict_price.cells_at(pd.Series({("2", "Y", "L"): -0.21}), cfg, 1.0, noise_y)
    assert y.rho[0] == pytest.approx(1.21)
    # A finding whose paper value sits on the edge is never decided: priced at the config's runs.
    edge = verdict_price.price(pd.Series({("2", "L", "L"): -0.12}), band, "about", cfg, noise, 0.8)
    assert not edge.decides and edge.factor == 1.0 and edge.power < 0.1
    # No paper cells, or a target without a noise figure: no price.
    assert verdict_price.price(pd.Series(dtype=float), band, "about", cfg, noise, 0.8) is None
    assert verdict_price.price(pd.Series({("2", "S", "S"): -0.2}), band, "about", cfg, noise, 0.8) is None


def test_the_extra_repetitions_make_each_cell_factor_times_its_runs():
    cfg = {
        "microservices": ["L", "S"],
        "pairs": ["L+S"],
        "cases": ["1", "2", "3a"],
        "repetitions": {"1": 3, "2": 2},
    }
    part = {"microservices": ["L", "S"], "pairs": ["L+S", "L+L"], "cases": ["1", "2"]}
    # Case 1: ceil(7.5) - 3 = 5 more a microservice; Case 2: 5 - 2 = 3 more of the pair it runs.
    assert verdict_price.extra_repetitions(part, 2.5, cfg) == {"1/L": 5, "1/S": 5, "2/L+S": 3}
    # Only the targets' baselines enter its IRs.
    assert verdict_price.extra_repetitions(part, 2.5, cfg, ["L"]) == {"1/L": 5, "2/L+S": 3}
    # Runs already bought (the plan's extra runs): the factor is of the runs made, and a cell
    # that already has them gets none: 3 + 5 = 8 runs of L's baseline × 1.5 = 12, 9 more than 3.
    bought = cfg | {"extra_repetitions": {"1/L": 5, "2/L+S": 3}}
    assert verdict_price.extra_repetitions(part, 1.5, bought, ["L"]) == {"1/L": 9, "2/L+S": 6}
    assert verdict_price.extra_repetitions(part, 1.0, bought, ["L"]) == {}


def test_the_prior_pools_sessions_by_degrees_of_freedom_and_the_host_wins(tmp_path):
    a = pd.DataFrame({"target": ["L"], "metric": ["gflops"], "run_var": [0.002], "iteration_var": [0.01],
                      "df_run": [10], "df_iteration": [100]})  # fmt: skip
    b = a.assign(run_var=0.008, iteration_var=0.004, df_run=30, df_iteration=300)
    pooled = verdict_price.pool([a, b]).iloc[0]
    assert pooled["run_var"] == pytest.approx((10 * 0.002 + 30 * 0.008) / 40)
    assert pooled["iteration_var"] == pytest.approx((100 * 0.01 + 300 * 0.004) / 400)
    assert (pooled["df_run"], pooled["sessions"]) == (40, 2)
    # The shipped prior covers every microservice of the papers.
    prior = verdict_price.noise(tmp_path / "none", "vm")
    assert {"L", "S", "B", "NS", "NR", "Y"} <= set(prior.run)
    # This host's own table, where it measured runs (df_run >= MIN_DF_RUN), wins target by target.
    own = tmp_path / "results" / verdict_price.HOST_TABLE
    own.parent.mkdir(parents=True)
    pd.DataFrame({"host": ["me", "me", "other"], "runtime": "docker", "target": ["L", "S", "NS"], "metric": ["g", "add", "t"],
                  "run_var": [0.5, 0.6, 0.7], "iteration_var": [0.1, 0.1, 0.1],
                  "df_run": [5, 4, 9]}).to_csv(own, sep="\t", index=False)  # fmt: skip
    mine = verdict_price.noise(tmp_path / "results", "me")
    assert mine.run["L"] == 0.5 and mine.source["L"] == "this host's runs"
    assert mine.run["S"] == prior.run["S"] and mine.run["NS"] == prior.run["NS"]


def test_each_side_is_priced_with_its_own_components_where_both_rest_on_enough_runs(tmp_path):
    """The tables' intervals give the baseline (Case 1) and the concurrent cells their own
    components; so does the price, where this host's table has both on MIN_DF_RUN degrees of
    freedom, and the pooled ones for both sides where either has fewer."""
    own = tmp_path / "results" / verdict_price.HOST_TABLE
    own.parent.mkdir(parents=True)
    pd.DataFrame({
        "host": "me", "runtime": "docker", "target": ["L", "L", "Y"], "metric": ["gflops", "gflops2", "t"],
        "run_var": [0.004, 0.004, 0.004], "iteration_var": [0.006, 0.006, 0.006], "df_run": 20,
        "baseline_run_var": [0.001, 0.003, 0.001], "baseline_iteration_var": [0.0004, 0.0004, 0.0004],
        "baseline_df_run": [11, 11, 4],
        "concurrent_run_var": [0.016, 0.018, 0.016], "concurrent_iteration_var": [0.009, 0.009, 0.009],
        "concurrent_df_run": [19, 19, 19],
    }).to_csv(own, sep="\t", index=False)  # fmt: skip
    mine = verdict_price.noise(tmp_path / "results", "me")
    # L: each side its own, the mean over its metrics; Y's baseline has 4 df: pooled for both.
    assert mine.sides[("L", "baseline")] == pytest.approx((0.002, 0.0004))
    assert mine.sides[("L", "concurrent")] == pytest.approx((0.017, 0.009))
    assert ("Y", "baseline") not in mine.sides and ("Y", "concurrent") not in mine.sides
    assert (
        mine.source["L"] == "this host's runs, each side its own" and mine.source["Y"] == "this host's runs"
    )
    cfg = {"iterations": 3, "repetitions": {"1": 3, "2": 2}, "cases": ["1", "2"],
           "adaptive": {"min_overlap_samples": 4}}  # fmt: skip
    cells = verdict_price.cells_at(pd.Series({("2", "L", "Y"): -0.2, ("2", "Y", "L"): -0.2}), cfg, 1.0, mine)
    # By hand: a run's mean of k iterations is run + iteration / k, over the side's runs.
    assert cells.var_cell == pytest.approx([(0.017 + 0.009 / 4) / 2, (0.004 + 0.006 / 4) / 2])
    assert cells.var_base == pytest.approx([(0.002 + 0.0004 / 3) / 3, (0.004 + 0.006 / 3) / 3])
    # A table written before the sides were: the pooled components for both, as before.
    old = pd.read_csv(own, sep="\t").drop(columns=verdict_price.SIDE_COLUMNS)
    old.to_csv(own, sep="\t", index=False)
    assert verdict_price.noise(tmp_path / "results", "me").sides == {}
