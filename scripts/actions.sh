#!/usr/bin/env bash
# Runs the jobs of .github/workflows/report.yml on this machine with act (nektos/act), one at a
# time, as a GitHub-hosted runner would: a fresh clone of HEAD on branch main, a non-root user
# `runner` with password-less sudo, setup-python finding Python in the runner's tool cache, act's
# own cache and artifact servers. Prints each job's result and time; keeps everything under OUT.
#
#   scripts/actions.sh [JOB...]          default: every job that can run here, in the workflow's order
#
# What act needs lives here, not in the workflow: the actions a job `uses:` come from local git
# mirrors when ACTIONS_MIRRORS has them (OWNER+REPO/repo, bare, at the workflow's tag; else act
# clones them from GitHub), and act itself is built from its Go module. Quarto's setup downloads
# from GitHub: the workflow skips that one step under act (`if: ${{ !env.ACT }}`), and the report
# jobs then render with the fallback renderer, which the report says. Run as root (it creates the
# user and installs sudo, nodejs and git when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORKFLOW=.github/workflows/report.yml
ACT_VERSION=v0.2.89
ACTIONS_MIRRORS=${ACTIONS_MIRRORS:-/work/.mirror}
OUT=${OUT:-/var/tmp/actions}
RUNNER=runner
# Jobs that cannot run on this machine, and why (printed, not run).
declare -A CANNOT=(
  [apptainer]="eWaterCycle/setup-apptainer downloads Apptainer's .deb from GitHub's releases, which this machine cannot reach (and Debian has no apptainer package)"
)
# The regression job twice: its first run finds no baseline and saves one (on main), the second
# compares with it.
DEFAULT_JOBS=(lint integration report-ci regression regression report-paper001 report-paper003 apptainer)

die() { echo "actions: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (it creates the user '$RUNNER' and installs what act needs)"

# --- act, and what its host mode needs -------------------------------------------------------
missing=()
command -v sudo >/dev/null || missing+=(sudo)
command -v node >/dev/null || missing+=(nodejs) # the JavaScript actions run on the host's node
command -v git >/dev/null || missing+=(git)
if [ ${#missing[@]} -gt 0 ]; then
  echo "actions: installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export PATH=$PATH:/usr/local/go/bin
if ! command -v act >/dev/null || [ "$(act --version | awk '{print $3}')" != "${ACT_VERSION#v}" ]; then
  command -v go >/dev/null || die "act is built from its Go module: install Go (1.24 or later) first"
  echo "actions: building act $ACT_VERSION"
  GOBIN=/usr/local/bin go install "github.com/nektos/act@$ACT_VERSION"
fi

# --- the runner's user: not root, sudo without a password (as on ubuntu-24.04) ------------------
if ! id "$RUNNER" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$RUNNER"
fi
echo "$RUNNER ALL=(ALL) NOPASSWD:ALL" > /etc/sudoers.d/actions-runner
chmod 0440 /etc/sudoers.d/actions-runner
# The runner's own PATH (root's holds folders the user may not read), with Go, which the runner has.
RUNNER_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin
as_runner() { sudo -u "$RUNNER" -H env "PATH=$RUNNER_PATH" "$@"; }

# Artifacts stay (each run's under its run id); the clones and logs are this invocation's.
rm -rf "$OUT/work" "$OUT/logs"
mkdir -p "$OUT"/{work,artifacts,logs,cache,actions}
touch "$OUT/logs/.started"
chown -R "$RUNNER:" "$OUT"

# Each job starts as on a new runner: a fresh clone of HEAD on branch main (the regression job
# saves baselines on main only) and a tool cache whose Python has nothing installed.
fresh_runner() { # JOB
  clone=$OUT/work/$1/$(basename "$REPO")
  rm -rf "$OUT/work/$1"
  git clone --quiet --no-hardlinks "$REPO" "$clone"
  git -C "$clone" checkout --quiet -B main "$(git rev-parse HEAD)"
  # Uncommitted changes to tracked files go along (a workflow tried before it is committed).
  if ! git diff --quiet HEAD; then
    git diff --binary HEAD | git -C "$clone" apply
    echo "actions: the clone has this tree's uncommitted changes: $(git diff --name-only HEAD | paste -sd' ')"
  fi
  chown -R "$RUNNER:" "$OUT/work/$1"
  # setup-python looks in RUNNER_TOOL_CACHE/Python/<version>/x64 (an x64.complete beside it)
  # first. A venv of Debian's python3.11 stands in for the runner's own build.
  local python=/usr/bin/python3.11 version toolcache
  [ -x "$python" ] || die "setup-python needs Python 3.11 in the tool cache: apt-get install python3.11-venv"
  version=$("$python" -c 'import platform; print(platform.python_version())')
  toolcache=$OUT/cache/tool_cache/Python/$version
  rm -rf "$toolcache"
  as_runner mkdir -p "$toolcache"
  as_runner "$python" -m venv "$toolcache/x64"
  as_runner touch "$toolcache/x64.complete"
}

# --- the actions the workflow uses, from local mirrors at the workflow's tags -------------------
# A mirror may lack its largest files (a JavaScript action's bundled dist/): those are built
# again from the action's own sources and lock file, as its release script does.
extract_action() { # MIRROR REF DIR
  local mirror=$1 ref=$2 dir=$3 lacking=() mode type sha path
  mkdir -p "$dir.part"
  while read -r mode type sha path; do
    [ "$type" = blob ] || continue
    mkdir -p "$dir.part/$(dirname "$path")"
    if git --git-dir="$mirror" cat-file -e "$sha" 2>/dev/null; then
      git --git-dir="$mirror" cat-file blob "$sha" >"$dir.part/$path"
      case $mode in 100755) chmod +x "$dir.part/$path" ;; esac
    else
      lacking+=("$path")
    fi
  done < <(git --git-dir="$mirror" ls-tree -r "$ref")
  if [ ${#lacking[@]} -gt 0 ]; then
    echo "actions: $(basename "$(dirname "$mirror")")@$ref lacks ${lacking[*]}: building them with npm"
    command -v npm >/dev/null || die "npm is needed to build ${lacking[*]}"
    (cd "$dir.part" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null &&
      { npm run release >/dev/null 2>&1 || npm run build >/dev/null; }) || die "building ${lacking[*]} failed"
    for path in "${lacking[@]}"; do
      [ -f "$dir.part/$path" ] || die "the build did not make $path"
    done
  fi
  chown -R "$RUNNER:" "$dir.part"
  mv "$dir.part" "$dir"
}

local_repos=()
for use in $(grep -oE 'uses: *[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[A-Za-z0-9_.-]+' "$WORKFLOW" | awk '{print $2}' | sort -u); do
  ref=${use##*@} owner_repo=$(echo "${use%@*}" | cut -d/ -f1-2)
  mirror=$ACTIONS_MIRRORS/${owner_repo/\//+}/repo
  [ -d "$mirror" ] || { echo "actions: no mirror of $owner_repo: act clones it from GitHub"; continue; }
  dir=$OUT/actions/${owner_repo/\//+}@$ref
  [ -d "$dir" ] || extract_action "$mirror" "$ref" "$dir"
  local_repos+=(--local-repository "$owner_repo@$ref=$dir")
done

# --- the jobs, one at a time ---------------------------------------------------------------
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=("${DEFAULT_JOBS[@]}")
known=$(awk '/^jobs:/{on=1; next} on && /^  [A-Za-z0-9_-]+:$/{sub(/:$/, ""); print $1}' "$WORKFLOW")
for job in "${jobs[@]}"; do
  grep -qx "$job" <<<"$known" || die "no job '$job' in $WORKFLOW (its jobs: $(echo $known))"
done

summary=()
worst=0
n=0
for job in "${jobs[@]}"; do
  n=$((n + 1))
  log=$OUT/logs/$n-$job.log
  if [ -n "${CANNOT[$job]:-}" ]; then
    summary+=("$(printf '%-16s %-10s %6s  %s' "$job" "not run" "-" "${CANNOT[$job]}")")
    continue
  fi
  echo "actions: job $job (log: $log)"
  fresh_runner "$job"
  start=$(date +%s)
  rc=0
  # A run id of its own, as GitHub numbers each run: artifacts and the regression job's
  # baselines (ci-<run id>) are kept per run.
  (cd "$clone" && as_runner act push -W "$WORKFLOW" -j "$job" --env "GITHUB_RUN_ID=$(date +%s)" \
    -P ubuntu-24.04=-self-hosted \
    --action-cache-path "$OUT/cache" --cache-server-path "$OUT/cache/actcache" \
    --artifact-server-path "$OUT/artifacts" "${local_repos[@]}") >"$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  result=$([ $rc = 0 ] && echo passed || echo "failed")
  [ $rc = 0 ] || worst=1
  summary+=("$(printf '%-16s %-10s %5ss  %s' "$job" "$result" "$secs" "$log")")
  echo "${summary[-1]}"
  [ $rc = 0 ] || tail -n 30 "$log" | sed 's/^/    /'
done

echo
echo "actions: the jobs of $WORKFLOW under act $ACT_VERSION (clone of $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes'))"
printf '%s\n' "${summary[@]}"
echo "artifacts (run id/name/name.zip): $OUT/artifacts"
find "$OUT/artifacts" -name '*.zip' -newer "$OUT/logs/.started" | sed "s|$OUT/artifacts/||" | sort | sed 's/^/  /'
exit $worst
