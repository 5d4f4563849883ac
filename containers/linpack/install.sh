#!/bin/sh
# Installs the Linpack microservice into /opt/microservices/L (run inside the image build).
set -eu
here=$(dirname "$0")
install-microservice L "$here" gcc libc6-dev libopenblas-dev libopenblas0-pthread
gcc -O3 -o /opt/microservices/L/linpack "$here/linpack.c" -lopenblas -lm
remove-build-packages gcc libc6-dev libopenblas-dev
