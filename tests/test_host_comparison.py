"""The pair study's hosts side by side (paper 004's fog vs edge): every case on one host relative
to the same case on the reference host, with bootstrap CIs, and the host × case analysis of
variance on the log scale — a host uniformly slower is a host effect, a case that costs more on
one host an interaction —; both empty with one host."""

import numpy as np
import pandas as pd
import pytest
from interference.studies.pairs.statistics.host_comparison import host_anova, host_ratios


def samples(edge_cost_3a: float) -> pd.DataFrame:
    """L alone (Case 1) and beside L (3a, 3b) on a fog host and an edge host at half its speed."""
    rng, rows = np.random.default_rng(7), []
    for host, speed in (("edge", 0.5), ("fog", 1.0)):
        for case, partner, cost in (("1", "NA", 1.0), ("3a", "L", 0.6), ("3b", "L", 0.9)):
            if host == "edge" and case == "3a":
                cost = edge_cost_3a
            for _ in range(8):
                rows.append({"host": host, "runtime": "docker", "case": case, "target": "L", "partner": partner,
                             "metric": "gflops", "value": 10 * speed * cost * (1 + 0.02 * rng.standard_normal()),
                             "unit": "GFLOPS", "higher_is_better": True, "status": "ok", "in_overlap": True})  # fmt: skip
    return pd.DataFrame(rows)


def test_each_case_relative_to_the_reference_host():
    r = host_ratios(samples(edge_cost_3a=0.6)).set_index("case")
    assert set(r["reference_host"]) == {"edge"} and set(r["host"]) == {"fog"}  # the first host by name
    for case in ("1", "3a", "3b"):
        assert r.loc[case, "relative"] == pytest.approx(2.0, rel=0.03)
        low, high = r.loc[case, "relative_ci_low"], r.loc[case, "relative_ci_high"]
        assert low < r.loc[case, "relative"] < high and high - low < 0.1


def test_the_interaction_says_whether_placement_costs_differ_between_hosts():
    def p(d, term):
        return d.set_index("term").loc[term, "p"]

    same = host_anova(samples(edge_cost_3a=0.6))
    assert p(same, "host") < 1e-6 and p(same, "case") < 1e-6 and p(same, "host:case") > 0.01
    worse = host_anova(samples(edge_cost_3a=0.3))  # beside L, the edge loses 70 %, the fog 40 %
    assert p(worse, "host:case") < 1e-6


def test_one_host_gives_empty_tables():
    one = samples(0.6)
    one = one[one["host"] == "fog"]
    assert host_ratios(one).empty and host_anova(one).empty
