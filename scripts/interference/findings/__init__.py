"""The scorecard of the papers' published findings (report/published/findings.yaml): each scored
against this config's statistics tables by its study's check (Study.findings, in the study's
findings.py), judged by one rule (verdict.py), written to results/stats/findings.tsv
(scorecard.py) and shown first in the report (section.py)."""
