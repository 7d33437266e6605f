#!/usr/bin/env bash
# Installs (Debian packages) and starts what the tests need, where missing or stopped:
# PostgreSQL, Redis, RabbitMQ. Safe to run again. Needs root for installs on a fresh machine.
set -euo pipefail

log() { printf '[ensure-services] %s\n' "$*"; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

APT_UPDATED=0
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $APT_UPDATED -eq 0 ]]; then as_root apt-get update -qq; APT_UPDATED=1; fi
  log "installing ${missing[*]}"
  # Postfix asks for a configuration at install; "No configuration" keeps it from doing anything.
  echo "postfix postfix/main_mailer_type select No configuration" | as_root debconf-set-selections
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

wait_for() { # name, command...
  local name=$1; shift
  for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && { log "$name is up"; return 0; }; sleep 0.5; done
  log "$name did not come up"; return 1
}

apt_install postgresql redis-server rabbitmq-server postgresql-client redis-tools
# Test peers the tests start themselves on 127.0.0.1 (never as system services): dnsmasq (the
# binary-only package) for DNS records, Dovecot for IMAPS, openssl for the test certificate.
apt_install dnsmasq-base dovecot-core dovecot-imapd openssl
# Send service peers: Postfix for its smtp-sink/smtp-source (receiver and load generator; "No
# configuration" above keeps Postfix itself idle), swaks, and python3-dkim as an independent
# DKIM verifier.
apt_install postfix swaks libnet-ssleay-perl python3-dkim python3-dnspython
# k8s manifests: `kubectl kustomize` renders the overlays offline (test/k8s.test.ts).
apt_install kubectl
# The dashboard's browser tests (test/dashboard.test.ts): Debian's Chromium, driven by playwright-core.
apt_install chromium

# PostgreSQL: trust auth on loopback for the tests' throwaway databases.
if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  ver=$(ls /etc/postgresql | sort -V | tail -1)
  hba=/etc/postgresql/$ver/main/pg_hba.conf
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
fi
wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432 -q
psql -h 127.0.0.1 -U postgres -tAc 'select 1' >/dev/null || { log "cannot connect to PostgreSQL as postgres with trust auth"; exit 1; }

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
fi
wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping

if ! as_root rabbitmqctl -q status >/dev/null 2>&1; then
  as_root rabbitmq-server -detached
fi
wait_for RabbitMQ as_root rabbitmqctl -q await_startup
