#!/bin/sh
# Installs what one config needs on this machine, nothing else, and makes sure a Docker engine
# answers when the config's runtimes need one.
#   scripts/ensure-engine.sh [CONFIG]            the config's runtimes and studies (default: config/config.yaml)
#   scripts/ensure-engine.sh --tests [--browser] what `make test` runs (every runtime, Slurm; the browser)
# The packages come from the declarations of the runtime adapters and studies
# (python -m interference.steps.host_setup). As root with apt it installs the missing ones and starts
# dockerd when needed, saying so; otherwise it names what is missing, who needs it and the
# command, and exits 1. PYTHON: the interpreter with the project's requirements (.venv's).
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
setup() { PYTHONPATH=scripts "$PYTHON" -m interference.steps.host_setup "$@"; }

need_pkgs=$(setup "$@")
if [ -n "$need_pkgs" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-engine: installing $need_pkgs"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_pkgs >/dev/null
  else
    setup "$@" --explain || true
    exit 1
  fi
fi
# Only a config whose runtimes need Docker (docker itself, or one made from its images) starts it.
setup "$@" --needs-engine || exit 0
if docker info >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ensure-engine: the Docker engine does not answer. Start it (sudo systemctl start docker, or sudo dockerd &) and make sure you may use it (group docker)." >&2
  exit 1
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "ensure-engine: started docker with systemctl"
  exit 0
fi
log=/var/log/dockerd-interference.log
echo "ensure-engine: no Docker engine answers; starting dockerd in the background (log: $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "ensure-engine: dockerd is up"; exit 0; fi
  sleep 1
done
echo "ensure-engine: dockerd did not come up within 60 s; see $log" >&2
tail -n 20 "$log" >&2
exit 1
