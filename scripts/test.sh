#!/usr/bin/env bash
# The whole test run: install and start what the tests need, then lint, type-check and
# run every jest suite (unit, then integration against the real servers, serially because
# some integration tests restart the shared broker).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-services.sh
[[ -d node_modules/.pnpm ]] || pnpm install --frozen-lockfile

echo "== lint"; pnpm exec biome check .
echo "== typecheck"; pnpm exec tsc -p tsconfig.json --noEmit && pnpm exec tsc -p services/gateway/dashboard/tsconfig.json
# TLS test peers (Dovecot IMAPS, SMTP STARTTLS) serve this certificate; Node reads
# NODE_EXTRA_CA_CERTS only at start, so it is created and exported before jest.
export NODE_EXTRA_CA_CERTS
NODE_EXTRA_CA_CERTS=$(bash libs/testkit/peers/test-ca.sh)
# PGlite loads its WASM with dynamic import(), which jest's module sandbox allows only with this flag.
export NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning"
echo "== tests"; LOG_SILENT=${LOG_SILENT:-1} pnpm exec jest --runInBand "$@"
