#!/bin/sh
# Installs the TCP stream microservice into /opt/microservices/NS (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends iperf3 >/dev/null
mkdir -p /opt/microservices/NS
install -m 0755 "$here/run" /opt/microservices/NS/run
dpkg-query -W -f '${Package} ${Version}\n' iperf3 libiperf0 > /opt/microservices/NS/versions.txt
rm -rf /var/lib/apt/lists/*
