/** Consumer-side rules shared by the AMQP and in-process buses, so both behave alike. */
import { type BusEnvelope, BusEnvelopeSchema } from '@mailyard/contracts';
import type { Logger } from '../logger/logger';
import { childTraceparent, isValidTraceparent, runWithTrace } from '../trace/context';
import {
  type ConsumeOptions,
  type Delivery,
  type Handler,
  type ParkedMessage,
  PermanentError,
  type SubscribeOptions,
  type SubscriptionHandler,
} from './types';

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
  // Names of the AMQP bus's parking and delay queues (amqp/topology.ts), refused by both buses alike.
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

export const DEFAULT_MAX_QUEUED = 10_000;

export interface SubscriptionSettings {
  bindings: SubscribeOptions['bindings'];
  maxQueued: number;
}

/** Validates subscribe options and fills defaults; throws with the offending field named. */
export function subscriptionSettings(options: SubscribeOptions): SubscriptionSettings {
  if (!Array.isArray(options.bindings) || options.bindings.length === 0)
    throw new Error('subscribe: bindings must be a non-empty array');
  const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
  if (!Number.isInteger(maxQueued) || maxQueued < 1 || maxQueued > 10_000_000) {
    throw new Error(`subscribe: maxQueued must be an integer from 1 to 10000000 (got ${maxQueued})`);
  }
  return { bindings: [...options.bindings], maxQueued };
}

/**
 * One message of a transient subscription: decoded, handed to the handler in the message's
 * trace context. Never throws: an invalid body or a failing handler is logged and dropped (a
 * live view has no retries and no parking).
 */
export function handleTransient(
  body: string,
  delivery: Omit<Delivery, 'envelope'>,
  handler: SubscriptionHandler<unknown>,
  logger: Logger,
): void {
  const decoded = decodeEnvelope(body);
  if (!decoded.ok) {
    logger.warn('bus subscription dropped an invalid message', { reason: decoded.reason });
    return;
  }
  const { envelope } = decoded;
  const ctx = {
    traceparent: isValidTraceparent(envelope.traceparent) ? envelope.traceparent : childTraceparent(),
    tenantId: envelope.tenant_id,
  };
  try {
    runWithTrace(ctx, () => handler({ envelope, ...delivery }));
  } catch (err) {
    logger.error('bus subscription handler failed; message dropped', {
      message_id: envelope.id,
      error: errorMessage(err),
    });
  }
}

/** A delay as a whole number of milliseconds (RabbitMQ's x-message-ttl is an integer). */
export function checkDelay(delayMs: number, what = 'publishDelayed'): number {
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new Error(`${what}: delay must be a finite number of milliseconds >= 0 (got ${delayMs})`);
  }
  return Math.round(delayMs);
}

/** What becomes of a message after one delivery attempt. */
export type Outcome =
  | { kind: 'done' }
  /** Not a valid envelope: parked as received, no handler sees it. */
  | { kind: 'invalid'; reason: string }
  /** `failures` counts this failure too (1 after the first failed attempt). */
  | { kind: 'retry'; envelope: BusEnvelope; failures: number; retryInMs: number; error: unknown }
  | { kind: 'park'; envelope: BusEnvelope; failures: number; reason: string };

/**
 * Decodes `body` and runs the handler in the message's trace context, so logs and new
 * envelopes carry it. When the handler throws, decides between a delayed retry and parking.
 */
export async function handleMessage(
  body: string,
  delivery: Omit<Delivery, 'envelope'>,
  handler: Handler<unknown>,
  retryDelaysMs: readonly number[],
): Promise<Outcome> {
  const decoded = decodeEnvelope(body);
  if (!decoded.ok) return { kind: 'invalid', reason: decoded.reason };
  const { envelope } = decoded;
  const { traceparent, tenant_id } = envelope;
  const ctx = {
    traceparent: isValidTraceparent(traceparent) ? traceparent : childTraceparent(),
    tenantId: tenant_id,
  };
  try {
    await runWithTrace(ctx, () => handler({ envelope, ...delivery }));
    return { kind: 'done' };
  } catch (err) {
    const failures = delivery.failures + 1;
    if (isPermanent(err)) {
      return { kind: 'park', envelope, failures, reason: truncate(`permanent error: ${errorMessage(err)}`) };
    }
    const retryInMs = retryDelaysMs[failures - 1];
    if (retryInMs === undefined) {
      const reason = truncate(`retries exhausted after ${failures} failures: ${errorMessage(err)}`);
      return { kind: 'park', envelope, failures, reason };
    }
    return { kind: 'retry', envelope, failures, retryInMs, error: err };
  }
}

/**
 * A parked body as `Bus.parked()` returns it: a body that is not a valid envelope gets a
 * placeholder (see `ParkedMessage`) and is kept in `raw`.
 */
export function parkedMessage(raw: string, reason: string, id?: string): ParkedMessage {
  const decoded = decodeEnvelope(raw);
  return decoded.ok
    ? { envelope: decoded.envelope, reason }
    : { envelope: placeholderEnvelope(raw, id), reason, raw };
}

type Decoded = { ok: true; envelope: BusEnvelope } | { ok: false; reason: string };

/** Parses and validates a message body; never throws. */
function decodeEnvelope(body: string): Decoded {
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

function placeholderEnvelope(raw: string, id?: string): BusEnvelope {
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

function isPermanent(err: unknown): boolean {
  return err instanceof PermanentError;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function truncate(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}
