"""The ping-pong study's report section: its method and what differs from paper 003 and why; a
figure of trans(m) per layer and the ratios of the paper's Figure 3; tables of the rates, the
ratios with CIs, Table I's %RSD beside the paper's and the services' CPU use per test (their
headroom). The paper's findings are judged once, by the findings step: the section shows their
rows (findings.section.study_blocks).

One class whose parts live in one module each:

  data      the statistics tables, a layer's colour and symbol, message sizes, the services' CPU use
  method    the method, what differs from paper 003, whether the services were the bottleneck
  figure    trans(m) per layer and the ratios of the paper's Figure 3
  tables    rates, ratios, Table I's %RSD and the services' headroom"""

from __future__ import annotations

from interference.studies.pingpong.section.data import PingPongData
from interference.studies.pingpong.section.figure import Figure
from interference.studies.pingpong.section.method import Method
from interference.studies.pingpong.section.tables import Tables

__all__ = ["PingPong", "section"]


class PingPong(Method, Figure, Tables, PingPongData):
    """Every part of the ping-pong study's section, from the Document's stats folder."""


def section(doc) -> PingPong:
    return PingPong(doc)
