"""The paper's generic parts, for report/paper.qmd and every study's section.

  load        reading results/stats/ (TSV by declared columns, environment.json)
  format      numbers, percentages, dates, lists as the paper prints them
  blocks      what a section emits: Markdown, HTML tables, figures; `emit` shows them
  tables      HTML tables (pandas Styler): grouped first column, captions, shaded cells
  figures/    one module per figure kind (bars of means, IR bars, heat map, scatter, runtimes)
  document    the paper-wide parts: numbering, abstract, environment, generic sections, colophon

A study's own section lives with the study (its `report_section` .qmd fragment and the code its
cells call); a study package may define `section.abstract(doc)` for the paper's abstract."""
