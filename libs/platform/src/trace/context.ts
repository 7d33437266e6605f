import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';

export interface TraceContext {
  traceparent: string;
  requestId?: string;
  tenantId?: string;
}

const storage = new AsyncLocalStorage<TraceContext>();

const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function isValidTraceparent(value: string | undefined): value is string {
  const m = value ? TRACEPARENT_RE.exec(value) : null;
  return !!m && !/^0+$/.test(m[1]!) && !/^0+$/.test(m[2]!);
}

// Ids are cut from a pool of random bytes refilled 4 KB at a time: one hex conversion per id
// instead of a call into the random source per request.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** `bytes` random bytes as lower-case hex, never all zeros (W3C trace context forbids it). */
function randomId(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > pool.length) {
      pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
      poolOffset = 0;
    }
    const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    if (!/^0+$/.test(hex)) return hex;
  }
}

/** A child span of `parent` (same trace id, new span id), or a new trace when absent/invalid. */
export function childTraceparent(parent?: string): string {
  const span = randomId(8);
  if (isValidTraceparent(parent)) {
    const [, traceId, , flags] = TRACEPARENT_RE.exec(parent)!;
    return `00-${traceId}-${span}-${flags}`;
  }
  return `00-${randomId(16)}-${span}-01`;
}

export function traceIdOf(traceparent: string): string | undefined {
  return TRACEPARENT_RE.exec(traceparent)?.[1];
}

export function runWithTrace<T>(ctx: TraceContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}
