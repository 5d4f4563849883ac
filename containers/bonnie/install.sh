#!/bin/sh
# Installs the Bonnie++ microservice into /opt/microservices/B (run inside the image build).
set -eu
here=$(dirname "$0")
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends bonnie++ >/dev/null
mkdir -p /opt/microservices/B
install -m 0755 "$here/run" /opt/microservices/B/run
dpkg-query -W -f '${Package} ${Version}\n' bonnie++ > /opt/microservices/B/versions.txt
rm -rf /var/lib/apt/lists/*
