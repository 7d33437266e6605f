#!/usr/bin/env bash
# Creates (once) the self-signed certificate the TLS test peers (Dovecot) serve, at a fixed
# path, and prints that path. The test process trusts it through NODE_EXTRA_CA_CERTS, which
# Node reads only at start: scripts/test.sh runs this and exports it before jest.
#   usage: test-ca.sh [DIR]   (default: <repo>/.tmp/test-ca)  -> DIR/cert.pem, DIR/key.pem
# SAN: DNS:localhost, IP:127.0.0.1. The certificate is its own CA (basicConstraints CA:TRUE).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
DIR=${1:-$ROOT/.tmp/test-ca}
mkdir -p "$DIR"
if [[ ! -s "$DIR/cert.pem" || ! -s "$DIR/key.pem" ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -keyout "$DIR/key.pem.tmp" -out "$DIR/cert.pem.tmp" 2>/dev/null
  chmod 600 "$DIR/key.pem.tmp"
  mv "$DIR/key.pem.tmp" "$DIR/key.pem"
  mv "$DIR/cert.pem.tmp" "$DIR/cert.pem"
fi
echo "$DIR/cert.pem"
