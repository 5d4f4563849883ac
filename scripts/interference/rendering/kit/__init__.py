"""The shared kit every section draws with, knowing no study (results/stats/ is read through
stores/stats_tables.py):

  format       numbers, percentages, dates, lists as the paper prints them
  blocks       what a section emits: Markdown, HTML tables, figures; `emit` shows them
  tables       HTML tables (pandas Styler): grouped first column, captions, shaded cells
  figures/     one module per figure kind (bars of means, IR bars, heat map, forest, scatter, ...)
  environment  the host, engines, images and config of the runs, as the paper prints them

It sits below the studies (pyproject.toml's layers): a study's section, which lives with the study
(its `report_section` .qmd fragment and the code its cells call), draws with it."""
