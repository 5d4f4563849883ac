#!/bin/sh
# Installs the reference probe into /opt/microservices/Q (run inside the image build).
set -eu
install-microservice Q "$(dirname "$0")" stress-ng fio iperf3 libiperf0
