#!/bin/sh
# Installs the pi microservice into /opt/microservices/Y (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends pi >/dev/null
mkdir -p /opt/microservices/Y
install -m 0755 "$here/run" /opt/microservices/Y/run
dpkg-query -W -f '${Package} ${Version}\n' pi libcln6 > /opt/microservices/Y/versions.txt
rm -rf /var/lib/apt/lists/*
