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


def one_cell(mu=-0.21, var=0.004, df=6.0) -> Cells:
    return Cells(np.array([mu]), np.array([0]), np.array([var]), np.array([var / 2]), df)


def test_one_cell_against_a_hand_computation():
    """Shown above an edge at 5 %: the estimate must exceed low + t(0.95, df)·se; it is normal
    about mu with that se, so the probability is Φ((mu - low)/se - t)."""
    c = one_cell()
    se = 0.79 * math.sqrt(0.004 + 0.002)
    hand = stats.norm.cdf((-0.21 + 0.30) / se - stats.t.ppf(0.95, 6))
    assert p_reproduced(c, Band(low=-0.30), "mean") == pytest.approx(hand, abs=MC)
    # Both edges (TOST, "about"): both one-sided tests must pass at once.
    both = np.mean(
        [
            (x + 0.30) / se > stats.t.ppf(0.95, 6) and (-0.12 - x) / se > stats.t.ppf(0.95, 6)
            for x in c.draws().ravel()
        ]
    )
    assert p_reproduced(c, Band(-0.30, -0.12), "about") == pytest.approx(both, abs=1e-12)
    assert p_reproduced(c, Band(-0.30, -0.12), "about") < p_reproduced(c, Band(low=-0.30), "mean")


def as_estimates(cells: Cells, x: np.ndarray) -> tuple[CellEstimate, ...]:
    """Simulated estimates as the tables' cells: their standard errors, each target's baseline
    as a shared loading (so the mean's covariance is the rule's own)."""
    se, out = cells.se(), []
    for i, (est, t) in enumerate(zip(x, cells.target)):
        base = cells.rho[i] * math.sqrt(cells.var_base[t])
        shared = ((("baseline", int(t)), base, cells.df),)
        low, high = est - 2 * se[i], est + 2 * se[i]
        out.append(
            CellEstimate(f"c{i}", est, low, high, se[i], cells.df, RUNS, shared, ("t", int(t)), cells.df)
        )
    return tuple(out)


@pytest.mark.parametrize(
    "quantifier, band, mu, target",
    [
        ("every", Band(low=-0.2), [-0.05, 0.10, -0.12], [0, 0, 1]),
        ("some", Band(low=0.0), [0.03, 0.24], [0, 0]),
        ("most", Band(high=-0.05), [-0.31, -0.12, -0.02], [0, 1, 1]),
        ("mean", Band(low=-0.05), [0.015, 0.024], [0, 1]),
        ("about", Band(-0.6, -0.28), [-0.36, -0.60], [0, 0]),
    ],
)
def test_the_vectorised_rule_agrees_with_the_real_verdict_rule(quantifier, band, mu, target):
    """The same simulated measurements judged by claims.judge_claim, one by one."""
    mu, target = np.array(mu), np.array(target)
    cells = Cells(mu, target, np.full(len(mu), 0.004), np.array([0.002, 0.003])[: target.max() + 1], 8.0)
    draws = cells.draws(600, seed=3)
    real = np.mean(
        [
            judge_claim(v.Measure.of(mean_of(cs := as_estimates(cells, x)), "sim", 30, cells=len(cs), by_cell=cs),
                        band, quantifier).verdict == v.REPRODUCED
            for x in draws
        ]
    )  # fmt: skip
    assert p_reproduced(cells, band, quantifier, n=600, seed=3) == pytest.approx(real, abs=1e-9)


def test_the_price_is_the_least_factor_whose_power_reaches_the_target():
    """One cell, by hand: at factor F the runs are ceil(3F) baselines and ceil(2F) concurrent;
    the power is Φ(margin/se - t) with the df of both sides' runs."""
    noise = verdict_price.Noise({"L": 0.004}, {"L": 0.006}, {"L": "test"})
    cfg = {"iterations": 3, "repetitions": {"1": 3, "2": 2}, "cases": ["1", "2"]}
    paper = pd.Series({("2", "L", "L"): -0.21})
    band = Band(-0.30, -0.12)

    def hand_power(f):
        b, r = math.ceil(3 * f - 1e-9), math.ceil(2 * f - 1e-9)
        var = 0.004 + 0.006 / 3
        se, t = 0.79 * math.sqrt(var / r + var / b), stats.t.ppf(0.95, (b - 1) + (r - 1))
        return stats.norm.cdf(0.09 / se - t) * 2 - 1  # TOST: both edges 9 points away

    want = next(f for f in verdict_price.FACTORS if hand_power(f) >= 0.8 + MC)
    got = verdict_price.price(paper, band, "about", cfg, noise, 0.8)
    assert got.decides and got.factor <= want and hand_power(got.factor) >= 0.8 - MC
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
    pd.DataFrame({"host": ["me", "me", "other"], "target": ["L", "S", "NS"], "metric": ["g", "add", "t"],
                  "run_var": [0.5, 0.6, 0.7], "iteration_var": [0.1, 0.1, 0.1],
                  "df_run": [5, 4, 9]}).to_csv(own, sep="\t", index=False)  # fmt: skip
    mine = verdict_price.noise(tmp_path / "results", "me")
    assert mine.run["L"] == 0.5 and mine.source["L"] == "this host's runs"
    assert mine.run["S"] == prior.run["S"] and mine.run["NS"] == prior.run["NS"]
