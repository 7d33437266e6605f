/** How bus messages look on the wire: properties and the headers this bus sets. */
import type { BusEnvelope } from '@mailyard/contracts';
import type { ConsumeMessage, GetMessage, Options } from 'amqplib';
import type { Delivery } from '../types';

const Header = {
  traceparent: 'traceparent',
  failures: 'x-failures',
  parkedReason: 'x-parked-reason',
  originalExchange: 'x-original-exchange',
  originalRoutingKey: 'x-original-routing-key',
} as const;

export function encode(envelope: BusEnvelope): { content: Buffer; properties: Options.Publish } {
  const headers: Record<string, unknown> = {};
  if (envelope.traceparent) headers[Header.traceparent] = envelope.traceparent;
  return {
    content: Buffer.from(JSON.stringify(envelope)),
    properties: {
      persistent: true,
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      messageId: envelope.id,
      type: envelope.type,
      timestamp: Math.floor(Date.now() / 1000),
      headers,
    },
  };
}

/** A retried message keeps the exchange and routing key it was first published with. */
export function deliveryOf(msg: ConsumeMessage): Omit<Delivery, 'envelope'> {
  const headers = msg.properties.headers ?? {};
  return {
    exchange: headerString(headers[Header.originalExchange]) ?? msg.fields.exchange,
    routingKey: headerString(headers[Header.originalRoutingKey]) ?? msg.fields.routingKey,
    failures: headerNumber(headers[Header.failures]) ?? 0,
    redelivered: msg.fields.redelivered,
  };
}

/** A handler failure, carried by the moved message to its next delivery. */
export interface Failure {
  exchange: string;
  routingKey: string;
  /** Failures so far, this one included. */
  failures: number;
}

/** Properties of a message moved to a delay queue. */
export function retryProperties(msg: ConsumeMessage, failure: Failure): Options.Publish {
  return { ...passOn(msg), headers: failureHeaders(msg, failure) };
}

/** Properties of a message moved to the parking queue; no `failure` when it never reached a handler. */
export function parkingProperties(msg: ConsumeMessage, reason: string, failure?: Failure): Options.Publish {
  const headers = failure ? failureHeaders(msg, failure) : ownHeaders(msg);
  return { ...passOn(msg), headers: { ...headers, [Header.parkedReason]: reason } };
}

export function parkedReason(msg: GetMessage): string {
  return headerString(msg.properties.headers?.[Header.parkedReason]) ?? 'unknown';
}

/** Properties kept when a message is moved to a delay or parking queue. */
function passOn(msg: ConsumeMessage): Options.Publish {
  const p = msg.properties;
  return {
    persistent: true,
    contentType: p.contentType ?? 'application/json',
    contentEncoding: p.contentEncoding,
    messageId: p.messageId,
    type: p.type,
    timestamp: p.timestamp,
  };
}

function failureHeaders(msg: ConsumeMessage, failure: Failure): Record<string, unknown> {
  return {
    ...ownHeaders(msg),
    [Header.failures]: failure.failures,
    [Header.originalExchange]: failure.exchange,
    [Header.originalRoutingKey]: failure.routingKey,
  };
}

/** Our headers only: the broker's x-death bookkeeping is not carried along. */
function ownHeaders(msg: ConsumeMessage): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg.properties.headers ?? {})) {
    if (k !== 'x-death' && !k.startsWith('x-first-death') && !k.startsWith('x-last-death')) headers[k] = v;
  }
  return headers;
}

function headerString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

function headerNumber(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}
