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

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The trace of something the service issued a ULID for before any trace existed (an inbound
 * message accepted by the MX: no caller sent a traceparent): the trace id is the ULID's 128 bits
 * in hex (48-bit time, 80 random bits), a new span. Every path that handles the thing later (the
 * in-process work, a recovery after a crash) derives the same trace id from the id alone, and the
 * trace id names the thing. A value that is not a ULID gets a new random trace.
 */
export function traceparentOfUlid(ulid: string): string {
  const span = randomId(8);
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i.test(ulid)) return childTraceparent();
  let n = 0n;
  for (const c of ulid.toUpperCase()) n = (n << 5n) | BigInt(CROCKFORD.indexOf(c));
  const traceId = n.toString(16).padStart(32, '0');
  return /^0+$/.test(traceId) ? childTraceparent() : `00-${traceId}-${span}-01`;
}
