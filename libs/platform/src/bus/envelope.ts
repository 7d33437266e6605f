import { type BusEnvelope, ulid } from '@mailyard/contracts';
import { childTraceparent, currentTrace } from '../trace/context';

/** Wraps a payload in a versioned envelope carrying the current trace. */
export function envelope<T>(
  type: string,
  payload: T,
  opts: { version?: number; tenantId?: string } = {},
): BusEnvelope<T> {
  return {
    id: ulid(),
    type,
    version: opts.version ?? 1,
    occurred_at: new Date().toISOString(),
    traceparent: childTraceparent(currentTrace()?.traceparent),
    tenant_id: opts.tenantId,
    payload,
  };
}
