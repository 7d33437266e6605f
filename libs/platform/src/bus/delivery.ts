/** Consumer-side rules shared by the AMQP and in-process buses, so both behave alike. */
import { type BusEnvelope, BusEnvelopeSchema } from '@mailyard/contracts';
import { childTraceparent, isValidTraceparent, runWithTrace } from '../trace/context';
import { type ConsumeOptions, type Delivery, type Handler, PermanentError } from './types';

export const DEFAULT_PREFETCH = 16;
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000];
/** Longest reason text kept with a parked message. */
const MAX_REASON_LENGTH = 1_000;

export interface ConsumerSettings {
  queue: string;
  bindings: ConsumeOptions['bindings'];
  prefetch: number;
  retryDelaysMs: number[];
}

/** Validates consume options and fills defaults; throws with the offending field named. */
export function consumerSettings(options: ConsumeOptions): ConsumerSettings {
  const { queue, bindings } = options;
  if (typeof queue !== 'string' || queue.trim() === '')
    throw new Error('consume: queue must be a non-empty string');
  if (queue.endsWith('.parking') || /\.delay\.\d+$/.test(queue)) {
    throw new Error(`consume: queue "${queue}" uses a name reserved for parking/delay queues`);
  }
  if (!Array.isArray(bindings)) throw new Error('consume: bindings must be an array');
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 65_535) {
    throw new Error(`consume: prefetch must be an integer from 1 to 65535 (got ${prefetch})`);
  }
  const retryDelaysMs = [...(options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS)].map((ms) =>
    checkDelay(ms, 'consume'),
  );
  return { queue, bindings: [...bindings], prefetch, retryDelaysMs };
}

/** A delay as a whole number of milliseconds (RabbitMQ's x-message-ttl is an integer). */
export function checkDelay(delayMs: number, what = 'publishDelayed'): number {
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new Error(`${what}: delay must be a finite number of milliseconds >= 0 (got ${delayMs})`);
  }
  return Math.round(delayMs);
}

export const parkingQueueName = (queue: string) => `${queue}.parking`;
export const delayQueueName = (queue: string, delayMs: number) => `${queue}.delay.${delayMs}`;

export type Decoded = { ok: true; envelope: BusEnvelope } | { ok: false; reason: string };

/** Parses and validates a message body; never throws. */
export function decodeEnvelope(body: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return { ok: false, reason: `invalid message: body is not JSON (${errorMessage(err)})` };
  }
  const parsed = BusEnvelopeSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return { ok: false, reason: truncate(`invalid message: not a valid envelope (${issues})`) };
  }
  // The value as sent, not zod's copy: fields a newer producer added are not stripped.
  return { ok: true, envelope: value as BusEnvelope };
}

/** What a parked non-envelope looks like to `Bus.parked()` (see `ParkedMessage`). */
export function placeholderEnvelope(raw: string, id?: string): BusEnvelope {
  let payload: unknown = raw;
  try {
    payload = JSON.parse(raw);
  } catch {
    // keep the text
  }
  return {
    id: id || 'unknown',
    type: 'invalid',
    version: 1,
    occurred_at: new Date(0).toISOString(),
    payload,
  };
}

export type FailureAction = { retryInMs: number } | { parkReason: string };

/**
 * Decides what happens to a message whose handler threw. `failures` counts this failure too
 * (1 after the first failed attempt).
 */
export function onHandlerFailure(
  err: unknown,
  failures: number,
  retryDelaysMs: readonly number[],
): FailureAction {
  if (isPermanent(err)) return { parkReason: truncate(`permanent error: ${errorMessage(err)}`) };
  const delay = retryDelaysMs[failures - 1];
  if (delay === undefined) {
    return { parkReason: truncate(`retries exhausted after ${failures} failures: ${errorMessage(err)}`) };
  }
  return { retryInMs: delay };
}

export function isPermanent(err: unknown): boolean {
  // The name check also catches a PermanentError from a second copy of this module.
  return err instanceof PermanentError || (err instanceof Error && err.name === 'PermanentError');
}

/** Runs the handler inside the message's trace context, so logs and new envelopes carry it. */
export function runHandler<T>(handler: Handler<T>, delivery: Delivery<T>): Promise<void> {
  const { traceparent, tenant_id } = delivery.envelope;
  const ctx = {
    traceparent: isValidTraceparent(traceparent) ? traceparent : childTraceparent(),
    tenantId: tenant_id,
  };
  return runWithTrace(ctx, async () => handler(delivery));
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function truncate(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}
