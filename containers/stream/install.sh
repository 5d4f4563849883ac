#!/bin/sh
# Installs the STREAM microservice into /opt/microservices/S (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends gcc libc6-dev libgomp1 >/dev/null
mkdir -p /opt/microservices/S
gcc -O3 -fopenmp -o /opt/microservices/S/stream "$here/stream.c" -lm
install -m 0755 "$here/run" /opt/microservices/S/run
dpkg-query -W -f '${Package} ${Version}\n' gcc libgomp1 > /opt/microservices/S/versions.txt
rm -rf /var/lib/apt/lists/*
