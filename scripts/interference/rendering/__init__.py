"""Everything that turns results/stats/ into the paper, and nothing that computes or judges:

  document          the Document report/paper.qmd reads: numbering, abstract, environment, the
                    generic section of a study without its own, the colophon
  findings_section  the scorecard and the findings, from findings.tsv
  changes_section   today against the saved sessions, from changes.tsv and regression.tsv
  render, fallback  the two renderers (Quarto; nbclient + nbconvert with template/), common.py
                    what they share
  kit/              the shared kit the sections draw with (formats, blocks, tables, figures)

A study's own section lives with the study and draws with kit/ (its `report_section` .qmd
fragment, found by render.py; `section.abstract(doc)` if it adds to the abstract)."""
