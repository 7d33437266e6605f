#!/usr/bin/env bash
# Records where the send service's CPU goes in one batch phase of `pnpm bench:send` (on-CPU
# samples of every thread of the send process, perf record -g, JIT frames named through
# --perf-basic-prof) and prints bench/support/perf-breakdown.ts's breakdown of them.
#
#   bash bench/send/perf-batch.sh [out-prefix]     (run from the checkout; needs perf, root or
#                                                   perf_event_paranoid <= 1)
# BENCH_BATCH_REQUESTS (default 100 here: 10,000 copies, so the JIT warm-up weighs less) and the
# other bench:send settings apply. The whole life of the process is recorded; pass
# `--time <start>,` to perf script to keep only the steady part (perf script -F time shows it).
set -euo pipefail
out=${1:-/tmp/send-perf}
root=$(pwd)
( BENCH_PROFILE=0 BENCH_PHASES=batch BENCH_BATCH_REQUESTS=${BENCH_BATCH_REQUESTS:-100} \
  BENCH_SEND_ENV="NODE_OPTIONS=--perf-basic-prof ${BENCH_SEND_ENV:-}" pnpm bench:send >"$out.bench.json" 2>&1 ) &
bench=$!
pid=""
for _ in $(seq 1 900); do
  pid=$(pgrep -f "$root/dist/bin/send.js" | head -1 || true)
  [ -n "$pid" ] && break
  sleep 0.2
done
[ -n "$pid" ] || { echo "the send service did not start" >&2; wait $bench; exit 1; }
perf record -F 499 -g -p "$pid" -o "$out.perf" 2>/dev/null &
rec=$!
wait $bench
kill -INT $rec 2>/dev/null || true
wait $rec || true
perf script -i "$out.perf" -F tid,ip,sym >"$out.txt" 2>/dev/null
pnpm exec tsx bench/support/perf-breakdown.ts "$out.txt"
echo "bench report: $out.bench.json; samples: $out.perf" >&2
