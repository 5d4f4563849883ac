# The two set-up commands (see README):
#   make paper   the main job: report/paper.html from config/config.yaml
#   make test    the test suite (unit tests, lint, and real runs on tiny configs)
# Both create .venv from the pinned requirements; `make paper` installs what CONFIG needs
# (config/config.yaml: docker.io and debootstrap), `make test` what every test runs.
PYTHON ?= python3
VENV := .venv
SNAKEMAKE := $(VENV)/bin/snakemake
CORES ?= 1
CONFIG ?= config/config.yaml

.PHONY: paper settle test actions engine venv bytecode check-config save regression-check advise check-advice validate-placement

$(VENV)/.installed: requirements.txt requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	@# uv (pinned) installs the pinned requirements in about 6 s where pip takes over a minute;
	@# pip where uv cannot be had (it compiles every file's bytecode itself).
	$(VENV)/bin/pip install --quiet uv==0.9.30 && \
		$(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python -r requirements.txt -r requirements-test.txt || \
		{ $(VENV)/bin/pip install --quiet --upgrade pip==26.3 && \
		  $(VENV)/bin/pip install --quiet -r requirements.txt -r requirements-test.txt; }
	@# Bytecode now (where PYTHONDONTWRITEBYTECODE is set nothing else writes it), but not of the
	@# packages' own test folders (a quarter of the files, never imported): 12 s where uv's
	@# --compile-bytecode of everything took 25 s (2026-11-27). A file that does not compile is
	@# compiled when imported instead.
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib > /dev/null || \
		echo "some installed files did not compile to bytecode: they compile when imported"
	touch $@

venv: $(VENV)/.installed

# Installs only what CONFIG's runtimes and studies declare they need (as root with apt; else it
# names what is missing and the command), and starts dockerd when they need Docker.
engine: venv
	PYTHON=$(VENV)/bin/python sh scripts/ensure-engine.sh $(CONFIG) $(if $(BUDGET),--budget $(BUDGET))

# Bytecode of the package, written once: where PYTHONDONTWRITEBYTECODE is set (these machines),
# every job would compile the modules it imports again (~0.3 s a job).
bytecode: venv
	$(VENV)/bin/python -m compileall -q scripts > /dev/null

# First the config's first runs, without its findings or budget (rule calibration): the budgeted
# plan is then priced by this host's own runs, not by its probe (docs/planning.md), and what it
# needs installed after them.
paper: venv bytecode
	PYTHON=$(VENV)/bin/python sh scripts/ensure-engine.sh $(CONFIG) --base
	$(SNAKEMAKE) --cores $(CORES) calibration $(if $(filter-out config/config.yaml,$(CONFIG)),--configfile $(CONFIG)) --config findings=[] budget_min=
	PYTHON=$(VENV)/bin/python sh scripts/ensure-engine.sh $(CONFIG) $(if $(BUDGET),--budget $(BUDGET))
	$(SNAKEMAKE) --cores $(CORES) report/paper.html $(if $(filter-out config/config.yaml,$(CONFIG)),--configfile $(CONFIG)) $(if $(BUDGET),--config budget_min=$(BUDGET))

# After make paper: more runs for the findings more runs would decide, within BUDGET minutes
# (default 30; steps/settle.py), then the report again.
settle: venv
	PYTHON=$(VENV)/bin/python sh scripts/ensure-engine.sh $(CONFIG)
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.steps.settle --config $(CONFIG) --budget $(or $(BUDGET),30) --cores $(CORES) --run

test: venv bytecode
	PYTHON=$(VENV)/bin/python sh scripts/ensure-engine.sh --tests --browser
	@# actionlint (the workflow test) from its Go module where Go is there; without it that test skips.
	[ -x $(VENV)/bin/actionlint ] || ! command -v go >/dev/null || \
		GOBIN=$(abspath $(VENV))/bin go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 || \
		echo "actionlint could not be built: the workflow test skips"
	PYTHON=$(VENV)/bin/python sh scripts/run-tests.sh

# Every job of .github/workflows/report.yml run on this machine by act (nektos/act), as a
# GitHub-hosted runner would run it (as root; not part of make test: about an hour). JOBS: some.
actions:
	bash scripts/actions.sh $(JOBS)

# Check config files before handing them to snakemake (a YAML error names file, line, column).
check-config: venv
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.steps.config $(CONFIG)

# Save today's results (statistics and samples) as a named session to compare later runs with
# (config compare_with: [sessions/NAME.tar.gz]).
save: venv
	@test -n "$(NAME)" || { echo "usage: make save NAME=<session name>"; exit 2; }
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.stores.sessions save $(NAME)

# The regression check: the changes against the config's sessions; exit 1 if a cell changed
# beyond the threshold (the cells are printed).
regression-check: venv
	$(SNAKEMAKE) --cores $(CORES) stats $(if $(filter-out config/config.yaml,$(CONFIG)),--configfile $(CONFIG))
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.stores.sessions check

# Placement advice from the profiling study (config/profiling.yaml) on this host: every placement
# of 2 or 3 microservices ranked by predicted slowdown, measured pairs beside it
# (make advise SERVICES="L S NR" CORES=2 MEMORY=4g; CORES defaults to this host's); and the predictor checked against the pair
# study's measured pairs (results/stats/placement/validation*.tsv); make check-advice: the
# advice's recommended and worst-ranked placements compared on their measured runs
# (config/triples-check.yaml measures a set of three in every placement). MODEL=cpu-shares validates
# the CPU-share model instead (its quota sweep: config/cpu-shares.yaml; PROFILES=its results/stats), and
# make advise MODEL=cpu-shares advises by it; MODEL=cpu-busy reads the busy sweep instead of the quota
# sweep (studies.profiling.busy); MODEL=cpu-shares+pinned adds the rest from bubbles pinned
# to the other core (config/cpu-shares-pinned.yaml). PROFILES="A/results/stats B/results/stats":
# several profiling sessions of this host, pooled point by point (cpu-shares and cpu-busy).
ADVICE_ARGS = --services $(SERVICES) --memory $(or $(MEMORY),4g) \
	--cores $(if $(filter command line,$(origin CORES)),$(CORES),$(shell nproc)) \
	$(if $(MODEL),--model $(MODEL)) $(if $(PROFILES),--profiles $(PROFILES))
advise: venv
	@test -n "$(SERVICES)" || { echo 'usage: make advise SERVICES="L S NR" [CORES=2] [MEMORY=4g]'; exit 2; }
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.steps.placement advise $(ADVICE_ARGS)

check-advice: venv
	@test -n "$(SERVICES)" || { echo 'usage: make check-advice SERVICES="L S NS" [CORES=2] [MEMORY=4g]'; exit 2; }
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.steps.placement check $(ADVICE_ARGS)

validate-placement: venv
	PYTHONPATH=scripts $(VENV)/bin/python -m interference.steps.placement validate $(if $(REPLICATE),--replicate $(REPLICATE)) \
		$(if $(MODEL),--model $(MODEL)) $(if $(PROFILES),--profiles $(PROFILES))
