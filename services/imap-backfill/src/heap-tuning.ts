/**
 * V8 heap tuning of the standalone imap-backfill process (docs/backfill.md "Memory").
 *
 * A backfill allocates ~190 KB of short-lived objects per message (mailparser) and keeps a little
 * of each alive across young-generation collections (messages being parsed, posts awaiting their
 * confirm), so the old generation fills with garbage that only a full collection frees. V8 lets it
 * grow to about 2.5x the live heap before collecting (34 -> ~90 MB here, plus the Buffers those
 * objects hold outside the heap): the worker peaked at ~250 MB RSS for ~35 MB live. A growing
 * factor of 1.5 (`--heap-growing-percent=50`) collects sooner: peak ~130 MB at 20,000 messages.
 * Set at start-up because Node refuses it in NODE_OPTIONS (the image's entry point takes no
 * per-service flags); V8 reads it at every collection. The young generation is the other half:
 * `--max-semi-space-size=2` in NODE_OPTIONS (k8s/base/imap-backfill.yaml, docker-compose.yml),
 * which V8 reads only when the heap is set up. A `--heap-growing-percent` given to node itself
 * (command line or NODE_OPTIONS) wins. Not applied in the all-in-one process: its other services
 * allocate differently.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** Applies the growing factor unless node was given one; whether it did. */
export function tuneHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): boolean {
  if ([...execArgv, nodeOptions].some((a) => a.includes('--heap-growing-percent'))) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
