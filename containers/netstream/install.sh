#!/bin/sh
# Installs the TCP stream microservice into /opt/microservices/NS (run inside the image build).
set -eu
install-microservice NS "$(dirname "$0")" iperf3 libiperf0
