#!/usr/bin/env bash
# Containers on this kind of machine (Firecracker VM, cgroup v1, no CAP_SYS_RESOURCE, no container
# registry reachable): podman with runc, a Debian base image built locally with debootstrap from the
# machine's own apt mirror, and a node:20 stand-in image made from the host's Node.js. Afterwards
# `docker-compose` (Debian's 1.29) talks to podman through a Docker-compatible socket.
# (Copied from the project's shared reference, containers/podman-up.sh, so a clean clone in CI has it.)
#
#   source podman-up.sh [WORKDIR]      # exports CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, DOCKER_HOST
#   docker-compose build && docker-compose up -d && ... && docker-compose down -t 1
#   podman-up.sh stop                   # stops the socket service and the healthcheck loop
#
# Measured: about 1 minute on a fresh machine (apt 15 s, debootstrap 25 s, import 3 s, node image 8 s),
# about 2.5 GB of disk. Notes: crun fails here (setrlimit, hybrid cgroups) - runc with the limits
# below works; podman 4.3 runs healthchecks through systemd timers, which do not exist here, so a
# small loop runs them (needed for depends_on: condition: service_healthy); an https proxy may sit
# between containers and registries, so the host's CA bundle is copied into the node image.
set -euo pipefail
W=${1:-${PODMAN_WORKDIR:-/tmp/podman-work}}
if [ "$W" = stop ]; then
  W=${PODMAN_WORKDIR:-/tmp/podman-work}
  for f in "$W/service.pid" "$W/hc-loop.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; rm -f "$f"; done
  exit 0
fi
mkdir -p "$W"
command -v podman >/dev/null && command -v docker-compose >/dev/null && command -v debootstrap >/dev/null || {
  export DEBIAN_FRONTEND=noninteractive; apt-get update -qq >/dev/null
  apt-get install -y -qq podman runc uidmap slirp4netns fuse-overlayfs containernetworking-plugins debootstrap iptables docker-compose >/dev/null; }
cat > "$W/storage.conf" <<EOC
[storage]
driver = "overlay"
runroot = "$W/run"
graphroot = "$W/storage"
EOC
cat > "$W/containers.conf" <<'EOC'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOC
export CONTAINERS_STORAGE_CONF=$W/storage.conf CONTAINERS_CONF=$W/containers.conf
# The Debian mirror this machine's apt already uses.
MIRROR=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
# One-line sources.list format, then Debian's own mirror.
[ -n "$MIRROR" ] || MIRROR=$(grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
if ! podman image exists localhost/debian-base; then
  [ -d "$W/rootfs/usr" ] || debootstrap --variant=minbase bookworm "$W/rootfs" "$MIRROR" >/dev/null
  tar -C "$W/rootfs" -c . | podman import -q - localhost/debian-base >/dev/null
fi
if ! podman image exists docker.io/library/node:20-bookworm-slim; then
  B=$W/nodebase; rm -rf "$B"; mkdir -p "$B"
  cp "$(command -v node)" "$B/node"; cp -a "$(npm root -g)/npm" "$B/npm"; cp /etc/ssl/certs/ca-certificates.crt "$B/host-ca.crt"
  cat > "$B/Containerfile" <<'EOC'
FROM localhost/debian-base
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY host-ca.crt /etc/ssl/certs/ca-certificates.crt
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd -g 1000 node && useradd -u 1000 -g node -m node
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
EOC
  podman build -q -t docker.io/library/node:20 -t docker.io/library/node:20-slim -t docker.io/library/node:20-bookworm-slim "$B" >/dev/null
fi
# Docker-compatible API for docker-compose and the docker CLI.
if [ ! -S "$W/podman.sock" ] || ! [ -f "$W/service.pid" ] || ! kill -0 "$(cat "$W/service.pid")" 2>/dev/null; then
  rm -f "$W/podman.sock"
  podman system service --time=0 "unix://$W/podman.sock" >"$W/service.log" 2>&1 & echo $! > "$W/service.pid"
  for _ in $(seq 1 50); do [ -S "$W/podman.sock" ] && break; sleep 0.1; done
fi
if ! [ -f "$W/hc-loop.pid" ] || ! kill -0 "$(cat "$W/hc-loop.pid")" 2>/dev/null; then
  ( while true; do
      for c in $(podman ps --filter health=starting --filter health=unhealthy --format '{{.ID}}' 2>/dev/null); do podman healthcheck run "$c" >/dev/null 2>&1 || true; done
      sleep 1
    done ) >/dev/null 2>&1 & echo $! > "$W/hc-loop.pid"
fi
export DOCKER_HOST=unix://$W/podman.sock
echo "podman ready: DOCKER_HOST=$DOCKER_HOST (images: localhost/debian-base, node:20-bookworm-slim stand-in)"
