# The two set-up commands (see README):
#   make paper   the main job: report/paper.html from config/config.yaml
#   make test    the test suite (unit tests, lint, and real runs on tiny configs)
# Both create .venv from the pinned requirements and make sure a container engine answers.
PYTHON ?= python3
VENV := .venv
SNAKEMAKE := $(VENV)/bin/snakemake
CORES ?= 1
CONFIG ?= config/config.yaml

.PHONY: paper test engine venv check-config

$(VENV)/.installed: requirements.txt requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip==26.3
	$(VENV)/bin/pip install --quiet -r requirements.txt -r requirements-test.txt
	touch $@

venv: $(VENV)/.installed

engine:
	sh scripts/ensure-engine.sh

paper: venv engine
	$(SNAKEMAKE) --cores $(CORES) report/paper.html

test: venv
	sh scripts/ensure-engine.sh --browser
	$(VENV)/bin/python -m pytest

# Check config files before handing them to snakemake (a YAML error names file, line, column).
check-config: venv
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.config $(CONFIG)
