#!/bin/sh
# Installs the STREAM microservice into /opt/microservices/S (run inside the image build).
set -eu
here=$(dirname "$0")
install-microservice S "$here" gcc libc6-dev libgomp1
gcc -O3 -fopenmp -o /opt/microservices/S/stream "$here/stream.c" -lm
remove-build-packages gcc libc6-dev
