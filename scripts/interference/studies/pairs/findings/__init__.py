"""The pair study's checks of the papers' findings (report/published/findings.yaml): each reads
the statistics tables (interference, split, contention, published) and gives our value of the
claim's quantity with its 95 % CI (findings.verdict.Measure), or why it cannot (Skip), with the
evidence from our own data that explains a difference: the limit's effect against the
partner's (split.tsv), the CPUs each member used (contention.tsv), the page cache, the idle
baseline, a CPU-spinning control partner.

  cells         the IR cells a finding's selector picks, and why there are none
  paper_values  the papers' own value of a finding's mean IR
  checks        the checks' measures (each a Measure or a Skip), attached by name to the
                check objects of ../check_registry.py (what each reads and needs planned,
                from ../selection.py's Selector: one reading for the scorer and the planner)
  evidence      what our own data say about the cells behind a value"""

from __future__ import annotations

from interference.studies.pairs.check_registry import CHECKS
from interference.studies.pairs.findings import checks  # noqa: F401 (registers the checks)
from interference.studies.pairs.findings.paper_values import _published_mean

__all__ = ["CHECKS", "_published_mean"]
