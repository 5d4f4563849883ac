#!/bin/sh
# Installs the Bonnie++ microservice into /opt/microservices/B (run inside the image build).
set -eu
install-microservice B "$(dirname "$0")" bonnie++
