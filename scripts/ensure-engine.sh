#!/bin/sh
# Makes sure a Docker engine answers, and that the other runtimes' tools are there: debootstrap
# (the base image when no registry is reachable), podman, lxc, and for the vm runtime qemu, a
# Debian kernel with its modules, a static busybox and cpio (its initramfs), e2fsprogs (its disks);
# for the network study Open vSwitch, ethtool, and iperf3 and sockperf on the host (its side of the
# measurements); for the ping-pong study ApacheBench and tinc on the host. As root on
# Debian/Ubuntu it installs Debian's docker.io and starts dockerd when needed, saying so;
# otherwise it says what to do.
# With --browser it also installs Chromium (the report test opens the HTML in it).
set -eu
need_pkgs=""
# A docker client alone is not enough: without a running engine, dockerd must be installed.
if ! docker info >/dev/null 2>&1 && ! command -v dockerd >/dev/null 2>&1; then
  need_pkgs="$need_pkgs docker.io"
fi
command -v debootstrap >/dev/null 2>&1 || need_pkgs="$need_pkgs debootstrap"
# Podman, the second runtime (daemonless: nothing to start).
command -v podman >/dev/null 2>&1 || need_pkgs="$need_pkgs podman"
command -v lxc-execute >/dev/null 2>&1 || need_pkgs="$need_pkgs lxc"
command -v qemu-system-x86_64 >/dev/null 2>&1 || need_pkgs="$need_pkgs qemu-system-x86"
ls /boot/vmlinuz-* >/dev/null 2>&1 || need_pkgs="$need_pkgs linux-image-amd64"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need_pkgs="$need_pkgs busybox-static"
command -v cpio >/dev/null 2>&1 || need_pkgs="$need_pkgs cpio"
command -v mkfs.ext4 >/dev/null 2>&1 || need_pkgs="$need_pkgs e2fsprogs"
command -v ovs-vswitchd >/dev/null 2>&1 || need_pkgs="$need_pkgs openvswitch-switch"
command -v ethtool >/dev/null 2>&1 || need_pkgs="$need_pkgs ethtool"
command -v iperf3 >/dev/null 2>&1 || need_pkgs="$need_pkgs iperf3"
command -v sockperf >/dev/null 2>&1 || need_pkgs="$need_pkgs sockperf"
# The ping-pong study: ApacheBench on the host (the load generator) and tinc (its userspace overlay).
command -v ab >/dev/null 2>&1 || need_pkgs="$need_pkgs apache2-utils"
command -v tincd >/dev/null 2>&1 || need_pkgs="$need_pkgs tinc"
# Slurm for the test of the Slurm profile (a single-node Slurm the test starts and stops).
command -v slurmctld >/dev/null 2>&1 || need_pkgs="$need_pkgs slurm-wlm"
command -v munged >/dev/null 2>&1 || need_pkgs="$need_pkgs munge"
if [ "${1:-}" = "--browser" ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
    command -v google-chrome >/dev/null 2>&1 || need_pkgs="$need_pkgs chromium"
fi
if [ -n "$need_pkgs" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-engine: installing Debian packages:$need_pkgs"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_pkgs >/dev/null
  else
    echo "ensure-engine: missing:$need_pkgs. Install them (e.g. sudo apt-get install$need_pkgs)." >&2
    exit 1
  fi
fi
if docker info >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ensure-engine: the Docker engine does not answer. Start it (sudo systemctl start docker, or sudo dockerd &) and make sure you may use it (group docker)." >&2
  exit 1
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "ensure-engine: started docker with systemctl"
  exit 0
fi
log=/var/log/dockerd-interference.log
echo "ensure-engine: no Docker engine answers; starting dockerd in the background (log: $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "ensure-engine: dockerd is up"; exit 0; fi
  sleep 1
done
echo "ensure-engine: dockerd did not come up within 60 s; see $log" >&2
tail -n 20 "$log" >&2
exit 1
