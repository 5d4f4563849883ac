"""Paper 003's ping-pong study run for real on a tiny config, to the report: ApacheBench against
ping and pong on two simulated hosts, as processes (bare metal: loopback, reference) and as
Docker containers on a bridge, a VXLAN overlay and tinc unencrypted and encrypted; every
test a transfer rate, the ratios of the paper's Figure 3 and Table I beside the paper's, the
services' CPU use recorded; nothing left behind."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import nothing_left, requires_engine, run_report

pytestmark = [pytest.mark.integration, requires_engine]

TINY = {
    "host": "testhost",
    "runtimes": ["baremetal", "docker"],
    "studies": {"pingpong": {"message_sizes": [10, 100000], "duration_s": 1, "iterations": 2}},
}
RUNS = {
    "baremetal": ["loopback", "reference"],
    "docker": ["container", "overlay", "overlay-userspace", "encrypted"],
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("paper003")
    run_report(wd, TINY)
    return wd


def test_every_layer_carried_every_test(workdir):
    for runtime, layers in RUNS.items():
        for layer in layers:
            meta = json.loads(
                (workdir / f"results/raw/testhost/{runtime}/pingpong/{layer}/rep1/meta.json").read_text()
            )
            assert meta["not_ready"] is None and meta["n_failed"] == 0, (runtime, layer, meta["events"])
            assert [(t["iteration"], t["message_bytes"]) for t in meta["tests"]] == [
                (1, 10), (1, 100000), (2, 10), (2, 100000)
            ]  # fmt: skip
            assert all(t["ping_cpu_s"] > 0 and t["pong_cpu_s"] > 0 for t in meta["tests"])
            if layer == "encrypted":
                assert (
                    meta["overlay"]["cipher"] == "aes-256-cbc" and "tinc" in meta["overlay"]["overlay_daemon"]
                )
            roles = {c["role"]: c for c in meta["containers"]}
            if runtime == "baremetal":  # processes in the hosts' namespaces (loopback: in this machine's)
                assert (roles["ping"]["argv"][:3] == ["ip", "netns", "exec"]) == (layer == "reference")
            elif runtime == "docker":  # loopback only: the study wires it into its host
                argv = roles["ping"]["argv"]
                assert argv[argv.index("--network") + 1] == "none"
    s = pd.read_csv(workdir / "results/stats/pingpong/summary.tsv", sep="\t")
    rate = s[s["metric"] == "transfer_rate"]
    assert len(rate) == 2 * sum(len(v) for v in RUNS.values()) and (rate["n"] == 2).all()
    assert (rate["mean"] > 0).all()
    # ab's bytes per request: a 100 kB message moves more than 1000 × a 10-byte one would
    small = rate[rate["message_bytes"] == 10].set_index(["runtime", "layer"])["mean"]
    large = rate[rate["message_bytes"] == 100000].set_index(["runtime", "layer"])["mean"]
    assert (large / small > 3).all()


def test_ratios_and_table_i(workdir):
    d = pd.read_csv(workdir / "results/stats/pingpong/relative.tsv", sep="\t")
    pairs = set(zip(d["runtime"], d["layer"], d["baseline"]))
    assert {("docker", "container", "reference"), ("docker", "encrypted", "overlay-userspace")} <= pairs
    assert ("baremetal", "reference", "loopback") in pairs
    assert len(d[(d["layer"] == "reference") & (d["baseline"] == "loopback")]) == 2  # once per size
    assert d["ci_low"].notna().all() and (d["ratio"] > 0).all()
    t = pd.read_csv(workdir / "results/stats/pingpong/rsd.tsv", sep="\t")
    assert len(t) == sum(len(v) for v in RUNS.values()) and (t["sizes"] == 2).all()
    assert (t["data_gb"] > 0).all()


def test_the_report_has_the_section_and_nothing_is_left(workdir):
    html = (workdir / "report/paper.html").read_text()
    assert "HTTP ping-pong by message size" in html and "Line charts of transfer rate" in html
    # Table I's Docker SDVN row: our tinc overlay's average %RSD, recomputed here from the samples
    # (100 × SD / mean of a size's tests, averaged over the sizes), beside the paper's 11.3.
    s = pd.read_csv(workdir / "results/parsed/pingpong/samples.tsv", sep="\t")
    rate = s[(s["layer"] == "overlay-userspace") & (s["metric"] == "transfer_rate") & (s["status"] == "ok")]
    avg_rsd = (100 * rate.groupby("message_bytes")["value"].agg(lambda v: v.std() / v.mean())).mean()
    row = re.search(r"<tr>(?:(?!</tr>).)*>Docker SDVN<(?:(?!</tr>).)*</tr>", html, re.S)[0]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
    assert cells[1] == "overlay-userspace (docker)" and cells[8] == "11.3", cells
    assert float(cells[4]) == pytest.approx(avg_rsd, abs=0.051), cells  # printed to 0.1
    assert "shows they are not the bottleneck" in html  # the method's sentence, from their CPU use
    assert nothing_left() == []
