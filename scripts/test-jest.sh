#!/usr/bin/env bash
# `pnpm test:jest [jest args]`: unit and integration files in parallel workers, then the files
# that stop the shared RabbitMQ (jest project "broker-restart") on their own, one at a time, so
# no other file loses its broker mid-test. (`pnpm test` runs every file serially.)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules"
status=0
pnpm exec jest --selectProjects unit integration --passWithNoTests "$@" || status=$?
pnpm exec jest --selectProjects broker-restart --runInBand --passWithNoTests "$@" || status=$?
exit "$status"
