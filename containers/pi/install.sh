#!/bin/sh
# Installs the pi microservice into /opt/microservices/Y (run inside the image build).
set -eu
install-microservice Y "$(dirname "$0")" pi libcln6
