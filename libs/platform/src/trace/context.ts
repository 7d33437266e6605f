import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

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

/** A child span of `parent` (same trace id, new span id), or a new trace when absent/invalid. */
export function childTraceparent(parent?: string): string {
  // randomUUID draws from Node's pooled entropy: far cheaper per request than randomBytes.
  const random = randomUUID().replace(/-/g, '');
  const span = random.slice(0, 16);
  if (isValidTraceparent(parent)) {
    const [, traceId, , flags] = TRACEPARENT_RE.exec(parent)!;
    return `00-${traceId}-${span}-${flags}`;
  }
  return `00-${randomUUID().replace(/-/g, '')}-${span}-01`;
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
