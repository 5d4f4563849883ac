#!/bin/sh
# The test suite in three phases, each run whatever another gave (the exit status is the worst):
# the unit tests on two processes (a file stays on one, the longest first) beside the few real
# runs that need no other run beside them (marker exclusive); then the other real runs on three
# processes (a file with its fixtures on one; runs still one at a time, by the measurement lock).
#   PYTHON=.venv/bin/python sh scripts/run-tests.sh [PYTEST ARGS...]
# make test and the workflow's integration job both run it. TEST_REPORTS=DIR: each phase's
# JUnit XML there (unit.xml, integration.xml, exclusive.xml); TEST_BASETEMP=DIR: each phase's
# pytest folders in DIR/<phase> (pytest empties its base folder when it starts); TEST_PHASES:
# which phases (default "unit integration exclusive"; the workflow's lint job runs "unit").
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
phase() { # NAME MARKERS [ARGS...]
  name=$1 markers=$2
  shift 2
  case " ${TEST_PHASES:-unit integration exclusive} " in *" $name "*) ;; *) return 0 ;; esac
  "$PYTHON" -m pytest -m "$markers" ${TEST_REPORTS:+--junitxml="$TEST_REPORTS/$name.xml"} \
    ${TEST_BASETEMP:+--basetemp="$TEST_BASETEMP/$name"} "$@"
}
rc=0
[ -z "${TEST_BASETEMP:-}" ] || mkdir -p "$TEST_BASETEMP"
# The unit tests make no runs and the exclusive ones only runs: they go side by side (the unit
# phase in the background, its output shown when it ends), the CPU work of one beside the runs
# of the other (together 200 s against 240-254 s one after the other, 2026-11-29). The
# background phase is the unit one: stopped by a signal, it leaves nothing behind.
unit_log=$(mktemp)
# (the background phase is a subshell: its pytest is its child)
trap '[ -z "${unit_pid:-}" ] || pkill -TERM -P "$unit_pid" 2>/dev/null; rm -f "$unit_log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
phase unit "not integration" -n 2 --dist loadfile --no-loadscope-reorder "$@" >"$unit_log" 2>&1 &
unit_pid=$!
phase exclusive "integration and exclusive" "$@" || rc=1
wait "$unit_pid" || rc=1
cat "$unit_log"
# Three processes on two cores: the runs wait on one lock (held 474-503 s whatever the count),
# and a third file's CPU work and waits fill its gaps: 597 and 629 s against 673 s with two (2026-11-29).
phase integration "integration and not exclusive" -n 3 --dist loadfile --no-loadscope-reorder "$@" || rc=1
exit $rc
