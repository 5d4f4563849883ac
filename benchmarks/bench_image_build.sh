#!/usr/bin/env bash
# Times the image builds of a config with a cold cache (no interference images, no base image,
# no build cache: debootstrap and apt-get run again) and a warm one (images present: the rule
# only checks the input hash). Removes the images it times, so run it on a machine you own.
#   bash benchmarks/bench_image_build.sh [config/ci.yaml]
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-config/ci.yaml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sm() { .venv/bin/snakemake -s Snakefile -d "$work" --cores 1 "$@" --quiet all --configfile "$cfg"; }
images=$(.venv/bin/python -c "
import sys; sys.path.insert(0, 'scripts')
from interference.steps.config import load; from interference.studies.pairs.cases import images_needed
c = load('$cfg'); print(' '.join(f'results/images/{c["host"]}/docker/{n}.json' for n in images_needed(c['studies']['pairs'])))")
docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^interference/' | xargs -r docker rmi -f >/dev/null || true
base=$(.venv/bin/python -c "import sys; sys.path.insert(0,'scripts'); from interference.steps.config import load; print(load('$cfg')['base_image'])")
docker rmi -f "$base" >/dev/null 2>&1 || true
docker builder prune -af >/dev/null
t0=$(date +%s%N)
sm $images
t1=$(date +%s%N)
rm -rf "$work/results/images"
sm $images
t2=$(date +%s%N)
echo "cold: $(( (t1 - t0) / 1000000 )) ms (debootstrap, apt-get and compiling in every image)"
echo "warm: $(( (t2 - t1) / 1000000 )) ms (images present: only the input hashes are checked)"
