"""The workflow's steps: what its rules and make targets run (validate and plan the config, build
images, run, parse, compute statistics, score the findings, compare sessions, move results
between hosts, set the host up), and the planning they share (the estimate, the plan of findings).
Steps may import every layer below them; nothing below imports a step (pyproject.toml's
import-linter contracts)."""
