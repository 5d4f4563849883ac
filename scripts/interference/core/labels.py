"""The label every entity a run makes carries (containers, networks, volumes, switches), with the
run's id as its value: what the runner removes after the run, and what tests look for."""

RUN_LABEL = "interference.run"
