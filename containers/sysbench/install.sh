#!/bin/sh
# Installs the sysbench CPU microservice into /opt/microservices/P (run inside the image build).
set -eu
install-microservice P "$(dirname "$0")" sysbench
