#!/bin/sh
# Installs the HTTP ping-pong services into /opt/microservices/HP (run inside the image build).
# ApacheBench (apache2-utils) comes along for `run`, the self-contained loopback test.
set -eu
here=$(dirname "$0")
install-microservice HP "$here" gcc libc6-dev apache2-utils
gcc -O2 -pthread -o /opt/microservices/HP/pingpong "$here/pingpong.c"
remove-build-packages gcc libc6-dev
