import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

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
  const span = randomBytes(8).toString('hex');
  if (isValidTraceparent(parent)) {
    const [, traceId, , flags] = TRACEPARENT_RE.exec(parent)!;
    return `00-${traceId}-${span}-${flags}`;
  }
  return `00-${randomBytes(16).toString('hex')}-${span}-01`;
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
