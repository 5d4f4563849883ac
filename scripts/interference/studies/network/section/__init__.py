"""The network study's report section: its method, our Tables II and III beside the paper's, a
figure of every row relative to bare metal's host-to-host (the paper's ratio as a diamond), and
generated verdicts on the paper's findings: host network ≈ bare metal; Linux bridge and OVS alike
at about half the throughput and twice the latency; a VM about half a container on the same
switch; nested children on the host network ≈ bare metal, behind a bridge or OVS slower.

One class whose parts live in one module each:

  data          relative.tsv's rows in report order, the recorded VM acceleration, row names
  method        the method and what differs from paper 001
  figure        every row relative to bare metal's host → host, the paper's ratios as diamonds
  tables        our Tables II and III (and IV and V: a server on another host) beside the paper's
  paper_ratios  the paper's own figure for each finding (ratios of its transcribed cells)
  verdicts      the generated verdicts on the paper's findings"""

from __future__ import annotations

from interference.studies.network.section.data import NetworkData
from interference.studies.network.section.figure import Figure
from interference.studies.network.section.method import Method
from interference.studies.network.section.paper_ratios import PAPER_PAIRS, paper_ratios, span
from interference.studies.network.section.tables import Tables
from interference.studies.network.section.verdicts import Verdicts

__all__ = ["PAPER_PAIRS", "Network", "paper_ratios", "section", "span"]


class Network(Method, Figure, Tables, Verdicts, NetworkData):
    """Every part of the network study's section, from the Document's stats folder."""


def section(doc) -> Network:
    return Network(doc)
