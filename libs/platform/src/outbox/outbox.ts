/**
 * The one outbox writer. Every outbox row is built by `outboxMessage` from a message definition
 * of libs/contracts (BusMessages: name, version, schema, exchange, routing key) and a payload
 * validated against the definition's schema, and
 * inserted by `writeOutbox` / `writeOutboxBatch` (or, for statements that must write the outbox
 * rows together with other rows in ONE statement, such as the send accept path and the
 * email-event writer, by the fragment `outboxInsertSql`). Call them with the transaction that writes the domain rows: the message is
 * published by the OutboxRelay if and only if that commits.
 */
import type { BusEnvelope, BusMessageDef, ExchangeName } from '@mailyard/contracts';
import { envelope } from '../bus/envelope';
import type { Queryable } from '../db/types';

/** One validated outbox row, ready to insert. */
export interface OutboxRow {
  exchange: ExchangeName;
  routingKey: string;
  envelope: BusEnvelope;
}

export interface OutboxOptions {
  tenantId?: string;
  /** Trace the message continues (else the current async context's). */
  traceparent?: string;
}

/** Thrown when a payload does not match its message definition (a programming error). */
export class OutboxPayloadError extends Error {
  constructor(
    readonly messageName: string,
    readonly issue: string,
  ) {
    super(`invalid ${messageName} outbox payload: ${issue}`);
    this.name = 'OutboxPayloadError';
  }
}

/** Validates `payload` against `def`'s schema and builds its outbox row (envelope, exchange, routing key). */
export function outboxMessage<T>(def: BusMessageDef<T>, payload: T, opts: OutboxOptions = {}): OutboxRow {
  const parsed = def.schema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OutboxPayloadError(
      def.name,
      `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const routingKey = def.routingKey(payload);
  if (!routingKey) throw new OutboxPayloadError(def.name, 'routing key must not be empty');
  return {
    exchange: def.exchange,
    routingKey,
    envelope: envelope(def.name, payload, {
      version: def.version,
      tenantId: opts.tenantId,
      parentTraceparent: opts.traceparent,
    }),
  };
}

/** The three array parameters of `outboxInsertSql` for `rows`. */
export function outboxParams(rows: readonly OutboxRow[]): [string[], string[], string[]] {
  return [
    rows.map((r) => r.exchange),
    rows.map((r) => r.routingKey),
    rows.map((r) => JSON.stringify(r.envelope)),
  ];
}

/**
 * The INSERT of outbox rows given as three array parameters (`$n` placeholders of exchange,
 * routing key, message; see outboxParams), in their order; `from` names extra FROM items that
 * gate the insert (e.g. a CTE that returns a row only when the send was inserted).
 */
export function outboxInsertSql(exchange: string, routingKey: string, message: string, from = ''): string {
  return `INSERT INTO outbox (exchange, routing_key, message)
  SELECT o.exchange, o.routing_key, o.message
    FROM ${from ? `${from}, ` : ''}unnest(${exchange}::text[], ${routingKey}::text[], ${message}::jsonb[]) WITH ORDINALITY AS o(exchange, routing_key, message, n)
   ORDER BY o.n`;
}

/**
 * The INSERT of outbox rows produced by `select` (columns exchange, routing_key, message, in
 * order), for a statement that computes them from rows built by outboxMessage (e.g. stamping).
 */
export function outboxInsertSelectSql(select: string): string {
  return `INSERT INTO outbox (exchange, routing_key, message) ${select}`;
}

/** Inserts `rows` (built by outboxMessage) in one statement; returns their ids in order. */
export async function writeOutboxBatch(tx: Queryable, rows: readonly OutboxRow[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const res = await tx.query<{ id: number | string }>(
    `${outboxInsertSql('$1', '$2', '$3')} RETURNING id`,
    outboxParams(rows),
  );
  return res.rows.map((r) => Number(r.id));
}

/** Validates and writes one message; returns the outbox row id. */
export async function writeOutbox<T>(
  tx: Queryable,
  def: BusMessageDef<T>,
  payload: T,
  opts: OutboxOptions = {},
): Promise<number> {
  const [id] = await writeOutboxBatch(tx, [outboxMessage(def, payload, opts)]);
  if (id === undefined) throw new Error('writeOutbox: INSERT returned no id');
  return id;
}

/**
 * A raw row with an arbitrary routing key and envelope, for the relay's own tests only (not
 * exported from the package): production writes go through writeOutbox.
 */
export async function enqueueOutbox(
  tx: Queryable,
  exchange: ExchangeName,
  routingKey: string,
  env: BusEnvelope,
): Promise<number> {
  if (!routingKey) throw new Error('enqueueOutbox: routingKey must not be empty');
  const [id] = await writeOutboxBatch(tx, [{ exchange, routingKey, envelope: env }]);
  return id!;
}
