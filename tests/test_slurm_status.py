"""The cap on the Slurm executor plugin's status-check interval (slurm.cap_status_interval): the
pinned plugin still has the interval it caps, and the cap holds whatever the plugin sets."""

from interference.host.slurm import SlurmUnavailable, cap_status_interval
from snakemake_executor_plugin_slurm import Executor


def test_the_plugins_interval_is_capped():
    class Probe(Executor):  # the real class's descendant: the plugin itself stays as it is
        pass

    cap_status_interval(Probe, 10)
    probe = object.__new__(Probe)
    probe._next_seconds_between_status_checks = None
    probe.next_seconds_between_status_checks = 180  # the plugin's backoff, at its most
    assert probe.next_seconds_between_status_checks == 10
    probe.next_seconds_between_status_checks = 2
    assert probe.next_seconds_between_status_checks == 2


def test_a_plugin_without_that_interval_is_refused_by_name():
    class Other:
        next_seconds_between_status_checks = 5

    try:
        cap_status_interval(Other, 10)
    except SlurmUnavailable as e:
        assert "next_seconds_between_status_checks" in str(e)
    else:
        raise AssertionError("no refusal")
