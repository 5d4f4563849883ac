#!/bin/sh
# The test suite in three phases, each run whatever the one before gave (the exit status is the
# worst): the unit tests on two processes (a file stays on one, the longest first); the real runs
# on two processes (a file with its fixtures on one; runs still one at a time, by the measurement
# lock); then the few that need the machine to themselves (marker exclusive), alone.
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
phase unit "not integration" -n 2 --dist loadfile --no-loadscope-reorder "$@" || rc=1
phase integration "integration and not exclusive" -n 2 --dist loadfile --no-loadscope-reorder "$@" || rc=1
phase exclusive "integration and exclusive" "$@" || rc=1
exit $rc
