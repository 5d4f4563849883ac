#!/bin/sh
# Installs the TCP request/response microservice into /opt/microservices/NR (run inside the image build).
set -eu
install-microservice NR "$(dirname "$0")" sockperf
