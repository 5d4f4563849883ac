#!/bin/sh
# Installs the bubble into /opt/microservices/X (run inside the image build).
set -eu
install-microservice X "$(dirname "$0")" stress-ng fio iperf3 libiperf0
