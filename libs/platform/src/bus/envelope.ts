import { type BusEnvelope, ulid } from '@mailyard/contracts';
import { childTraceparent, currentTrace } from '../trace/context';

/**
 * Wraps a payload in a versioned envelope continuing a trace: `parentTraceparent` when given
 * (work batched across messages must name its own), else the current async context's.
 */
export function envelope<T>(
  type: string,
  payload: T,
  opts: { version?: number; tenantId?: string; parentTraceparent?: string } = {},
): BusEnvelope<T> {
  return {
    id: ulid(),
    type,
    version: opts.version ?? 1,
    occurred_at: new Date().toISOString(),
    traceparent: childTraceparent(opts.parentTraceparent ?? currentTrace()?.traceparent),
    tenant_id: opts.tenantId,
    payload,
  };
}
