#!/bin/sh
# Installs the Linpack microservice into /opt/microservices/L (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends gcc libc6-dev libopenblas-dev >/dev/null
mkdir -p /opt/microservices/L
gcc -O3 -o /opt/microservices/L/linpack "$here/linpack.c" -lopenblas -lm
install -m 0755 "$here/run" /opt/microservices/L/run
dpkg-query -W -f '${Package} ${Version}\n' libopenblas0-pthread gcc > /opt/microservices/L/versions.txt
rm -rf /var/lib/apt/lists/*
