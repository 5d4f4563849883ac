#!/bin/sh
# Installs the TCP request/response microservice into /opt/microservices/NR (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends sockperf >/dev/null
mkdir -p /opt/microservices/NR
install -m 0755 "$here/run" /opt/microservices/NR/run
dpkg-query -W -f '${Package} ${Version}\n' sockperf > /opt/microservices/NR/versions.txt
rm -rf /var/lib/apt/lists/*
