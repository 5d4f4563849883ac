"""The network study's report section: its method, our Tables II and III beside the paper's, a
figure of every row relative to bare metal's host-to-host (the paper's ratio as a diamond). The
paper's findings are judged once, by the findings step: the section shows their rows
(findings.section.study_blocks).

One class whose parts live in one module each:

  data          relative.tsv's rows in report order, the recorded VM acceleration, row names
  method        the method and what differs from paper 001
  figure        every row relative to bare metal's host → host, the paper's ratios as diamonds
  tables        our Tables II and III (and IV and V: a server on another host) beside the paper's
"""

from __future__ import annotations

from interference.studies.network.section.data import NetworkData
from interference.studies.network.section.figure import Figure
from interference.studies.network.section.method import Method
from interference.studies.network.section.tables import Tables

__all__ = ["Network", "section"]


class Network(Method, Figure, Tables, NetworkData):
    """Every part of the network study's section, from the Document's stats folder."""


def section(doc) -> Network:
    return Network(doc)
