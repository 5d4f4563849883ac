#!/bin/sh
# A second, smaller host made on this machine, for a report that compares hosts (paper 004's fog
# desktop vs edge device): a container holding its own Docker engine (the nested runtime's parent
# image and flags), it and every container its engine starts confined to a host cgroup of the
# cores CPUSET and MEMORY bytes, in which this repository's pipeline runs CONFIG as host NAME. The
# results are exported to OUT/results-NAME.tar.gz for `interference.steps.transfer import`.
# The images this machine built for CONFIG are copied into the edge engine (saved and loaded, ids
# unchanged): the edge engine has no NAT to Debian's mirror, and the pipeline reuses an image whose
# inputs hash matches (recorded as reused_existing). Everything it made (the container, its
# engine's volume, the cgroups) is removed at the end. Same CPU model as this machine: only the
# cores, the memory and the engine differ; the report's environment table says so. pip in the
# container trusts this machine's CA bundle (PyPI may be behind a proxy that this machine trusts).
#   scripts/edge_host.sh CONFIG NAME OUT [CPUSET] [MEMORY_BYTES]     (run CONFIG here first)
set -eu
config=$1 name=$2 out=$3 cpuset=${4:-0} memory=${5:-4294967296}
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$(pwd)
parent=$(docker images --format '{{.Repository}}:{{.Tag}}' interference/nested-parent | head -n 1)
if [ -z "$parent" ]; then
  echo "edge_host: no interference/nested-parent image; run any study on the nested runtime once" >&2
  exit 1
fi
images=$(cat "$here"/results/images/*/docker/*.json 2>/dev/null | sed -n 's/.*"ref": "\(.*\)".*/\1/p' | sort -u)
if [ -z "$images" ]; then
  echo "edge_host: no results/images/*/docker/*.json in $here; run CONFIG on this machine first" >&2
  exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cp "$config" "$out/config.yaml"
ctr=interference-edge-$name
group=interference-edge-$name
cleanup() {
  docker rm -f -v "$ctr" >/dev/null 2>&1 || true
  # Its engine made the group (and its children) in every controller, not only the three limited.
  for d in /sys/fs/cgroup/*/"$group"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup
# cgroup v1: the host's cgroup that holds the container and its engine's children.
for c in cpuset cpu memory; do mkdir -p "/sys/fs/cgroup/$c/$group"; done
cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/$group/cpuset.mems"
echo "$cpuset" > "/sys/fs/cgroup/cpuset/$group/cpuset.cpus"
echo "$memory" > "/sys/fs/cgroup/memory/$group/memory.limit_in_bytes"
docker run -d --name "$ctr" --hostname "$name" --cgroup-parent "/$group" \
  --cap-add ALL --cap-drop SYS_RESOURCE --security-opt seccomp=unconfined \
  --security-opt apparmor=unconfined --security-opt systempaths=unconfined --cgroupns host \
  -v /sys/fs/cgroup:/sys/fs/cgroup:rw -v /var/lib/docker -v "$repo:/repo:ro" -v "$out:/out" \
  -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/host-ca.crt:ro -e PIP_CERT=/etc/ssl/certs/host-ca.crt \
  "$parent" "/$group/inner" overlay2 >/dev/null
inside() { docker exec "$ctr" sh -c "$1"; }
for _ in $(seq 1 60); do inside "docker info >/dev/null 2>&1" && break; sleep 1; done
echo "edge_host: $name up ($(inside nproc) cores, engine $(inside 'docker version --format {{.Server.Version}}'))"
# shellcheck disable=SC2086  # one argument per image
docker save debian:bookworm-slim $images | docker exec -i "$ctr" docker load >/dev/null
inside "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null"
inside "mkdir /work && tar -C /repo --exclude=./.venv --exclude=./results --exclude=./.snakemake \
  --exclude=./report/paper.html -cf - . | tar -C /work -xf -"
inside "cd /work && python3 -m venv .venv && .venv/bin/pip install -q -r requirements.txt"
started=$(date +%s)
inside "cd /work && .venv/bin/snakemake --cores 1 report/paper.html --configfile /out/config.yaml \
  --config host=$name 'run_on=[$name]' > /out/snakemake-$name.log 2>&1" || {
  echo "edge_host: the pipeline failed on $name; see $out/snakemake-$name.log" >&2
  exit 1
}
echo "edge_host: the pipeline ran on $name in $(( $(date +%s) - started )) s"
inside "cd /work && PYTHONPATH=scripts .venv/bin/python -m interference.steps.transfer export --host $name \
  --out /out/results-$name.tar.gz"
echo "edge_host: $out/results-$name.tar.gz"
