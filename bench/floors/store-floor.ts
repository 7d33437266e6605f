/**
 * The durable store floor: the least PostgreSQL work the design needs per email, through the
 * services' own libs/store statements with the largest batches the design allows, on the shared
 * PostgreSQL (its own database, migrated as the services measured are), one backend, one step
 * after the other (no concurrency: no lock waits, no group-commit timing):
 *
 * - accept: the gateway's group commit (sends.insertAcceptedBatch): `acceptGroup` sends per
 *   statement (single: 50, every connection's request in one statement; batch: 4), each with its
 *   QUEUED log rows and its `send.email` commands (one per 100 copies);
 * - load: the send service's copy loader (loadCopyRows): `loadGroup` copies per statement, the
 *   stored request fetched once per send (the service's request cache);
 * - deliver: the event writer (recordEmailEventBatch) recording MAIL_DELIVERED for `eventGroup`
 *   copies per transaction, `email.event` version-2 messages of up to 100 events (the send
 *   service's SEND_EVENTS_PER_MESSAGE);
 * - relay: the outbox relay's DELETE ... RETURNING of 100 rows per statement.
 *
 * Per step: the backend's CPU (/proc/<pid>/stat, exact: the backend serves nobody else) and this
 * process's CPU inside the libs/store call (the pg client: parameters, protocol, results; the
 * event writer's own outbox messages), per email. The rows and events the services build before
 * calling the store (copy plan, commands, event objects) are built outside the measurement. The relay's messages are returned: the bus floor publishes exactly them.
 * Leaves out: the accept context read (mailer/template; cacheable), idempotency keys, the
 * PostgreSQL server's shared processes (WAL writer, checkpointer, autovacuum: not per backend,
 * and the pipeline's `postgresql` figure leaves them out too), lock waits and retries.
 */
import { loadavg } from 'node:os';
import {
  BusMessages,
  type EmailEvent,
  SendRequestSchema,
  type StoredSendRequest,
  domainOf,
  planCopies,
  ulid,
} from '@mailyard/contracts';
import { type Db, configFrom, openDatabase, outboxMessage } from '@mailyard/platform';
import {
  type AcceptedSendRows,
  type CopyKey,
  createTenant,
  loadCopyRows,
  recordEmailEventBatch,
  sends,
} from '@mailyard/store';
import { emailEvent } from '@mailyard/testkit/webhooks';
import { cpuMsOf } from '../support/cpu';

export interface StoreShape {
  /** The request body of send `i` (singleBody / batchBody). */
  body: (i: number) => string;
  sendsCount: number;
  acceptGroup: number;
  loadGroup: number;
  eventGroup: number;
}

/** A message the relay took from the outbox, as it publishes it. */
export interface RelayedMessage {
  exchange: string;
  routing_key: string;
  message: unknown;
}

const COPIES_PER_COMMAND = 100;
const EVENTS_PER_MESSAGE = 100;
const r4 = (n: number) => Math.round(n * 10000) / 10000;
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function acceptedRows(tenantId: string, request: StoredSendRequest): AcceptedSendRows {
  const refId = ulid();
  const copies = planCopies(request, refId);
  const outbox = [];
  for (let i = 0; i < copies.length; i += COPIES_PER_COMMAND) {
    const chunk = copies.slice(i, i + COPIES_PER_COMMAND).map((c) => c.copy_id);
    outbox.push(
      outboxMessage(
        BusMessages.sendEmail,
        { sends: [{ tenant_id: tenantId, ref_id: refId, copy_ids: chunk }], attempt: 1 },
        { tenantId },
      ),
    );
  }
  return {
    send: {
      refId,
      tenantId,
      mailerId: request.mailer_id,
      campaignId: request.campaign_id ?? null,
      customArgs: request.custom_args ?? null,
      request,
    },
    recipients: copies.flatMap((c) =>
      c.recipients.map((r) => ({
        copyId: c.copy_id,
        recipient: r.email,
        recipientDomain: domainOf(r.email),
        recipientType: r.type,
      })),
    ),
    outbox,
  };
}

function delivered(refId: string, mailerId: string, email: string): EmailEvent {
  return emailEvent('MAIL_DELIVERED', new Date().toISOString(), {
    ref_id: refId,
    mailer_id: mailerId,
    email: [email],
    custom_args: null,
    message_id: `<${ulid()}@mailyard.bench>`,
  });
}

interface Step {
  backend_cpu_ms_per_email: number;
  client_cpu_ms_per_email: number;
  statements_per_email: number;
}

/** Runs the four steps for `shape` on `db` (pool of one); CPU per email of each. */
async function runShape(db: Db, pid: number, tenantId: string, shape: StoreShape) {
  const requests = Array.from(
    { length: shape.sendsCount },
    (_, i) => SendRequestSchema.parse(JSON.parse(shape.body(i))) as StoredSendRequest,
  );
  const steps: Record<string, Step> = {};
  let emails = 0;
  let statements = 0;
  const measure = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    statements = 0;
    const b0 = cpuMsOf(pid)!;
    const c0 = selfCpuMs();
    const out = await work();
    steps[name] = {
      backend_cpu_ms_per_email: (cpuMsOf(pid)! - b0) / emails,
      client_cpu_ms_per_email: (selfCpuMs() - c0) / emails,
      statements_per_email: statements / emails,
    };
    return out;
  };
  // The rows as the gateway builds them (copy plan, commands): its code, not the store's.
  const accepted = requests.map((r) => acceptedRows(tenantId, r));
  emails = accepted.reduce((n, a) => n + a.recipients.length, 0);
  await measure('accept', async () => {
    for (let i = 0; i < accepted.length; i += shape.acceptGroup) {
      await sends.insertAcceptedBatch(db, accepted.slice(i, i + shape.acceptGroup));
      statements++;
    }
  });
  // The commands' copies in order, as the send service takes them off its queue.
  const keys: CopyKey[] = accepted.flatMap((a) =>
    [...new Set(a.recipients.map((r) => r.copyId))].map((copy_id) => ({
      ref_id: a.send.refId,
      tenant_id: tenantId,
      copy_id,
    })),
  );
  const loaded = await measure('load', async () => {
    const out: Array<{ key: CopyKey; logId: string; email: string; mailerId: string }> = [];
    const seen = new Set<string>();
    for (let i = 0; i < keys.length; i += shape.loadGroup) {
      const group = keys.slice(i, i + shape.loadGroup);
      const withRequest = group.map((k) => {
        if (seen.has(k.ref_id)) return false;
        seen.add(k.ref_id);
        return true;
      });
      const rows = await loadCopyRows(db, group, withRequest);
      statements++;
      for (const row of rows) {
        if (row.request !== null) JSON.parse(row.request); // the service parses what it fetched
        for (const r of row.recipients)
          out.push({ key: group[row.k]!, logId: r.id, email: r.recipient, mailerId: row.mailer_id });
      }
    }
    return out;
  });
  if (loaded.length !== emails) throw new Error(`store floor: loaded ${loaded.length} of ${emails} copies`);
  // The events as the send service builds them after each delivery (its code, not the store's).
  const records = loaded.map((c) => ({
    tenantId,
    copyId: c.key.copy_id,
    recipients: [{ logId: c.logId, email: c.email }],
    event: delivered(c.key.ref_id, c.mailerId, c.email),
    attempt: 1,
  }));
  await measure('deliver', async () => {
    for (let i = 0; i < records.length; i += shape.eventGroup) {
      await recordEmailEventBatch(db, records.slice(i, i + shape.eventGroup), {
        eventsPerMessage: EVENTS_PER_MESSAGE,
      });
      statements += 4; // BEGIN, lock, write, COMMIT (the event writer's round trips)
    }
  });
  const relayed = await measure('relay', async () => {
    const out: RelayedMessage[] = [];
    for (;;) {
      const { rows } = await db.query<RelayedMessage>(
        `DELETE FROM outbox WHERE id = ANY(ARRAY(
           SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED
         )) RETURNING id, exchange, routing_key, message`,
      );
      statements++;
      if (rows.length === 0) return out;
      out.push(...rows);
    }
  });
  const notDelivered = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1 AND status <> 'MAIL_DELIVERED'`,
    [tenantId],
  );
  if (notDelivered.rows[0]!.n !== 0) throw new Error('store floor: log rows left undelivered');
  const sum = (k: keyof Step, names = Object.keys(steps)) => names.reduce((s, n) => s + steps[n]![k], 0);
  const part = (names: string[]) => ({
    postgresql: r4(sum('backend_cpu_ms_per_email', names)),
    pg_client: r4(sum('client_cpu_ms_per_email', names)),
  });
  return {
    emails,
    sends: shape.sendsCount,
    groups: { accept: shape.acceptGroup, load: shape.loadGroup, event: shape.eventGroup, relay: 100 },
    steps: Object.fromEntries(
      Object.entries(steps).map(([k, s]) => [
        k,
        {
          backend_cpu_ms_per_email: r4(s.backend_cpu_ms_per_email),
          client_cpu_ms_per_email: r4(s.client_cpu_ms_per_email),
          statements_per_email: r4(s.statements_per_email),
        },
      ]),
    ),
    /** In the request (before the 200): the accept step. */
    accept_path: part(['accept']),
    /** After it: load, deliver, relay. */
    delivery: part(['load', 'deliver', 'relay']),
    relayed_messages: relayed.length,
    relayed,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The store floor for each shape on a fresh tenant of the database at `url`. */
export async function storeFloor(url: string, shapes: Record<string, StoreShape>) {
  const db = await openDatabase(configFrom({ DATABASE_URL: url, DB_POOL_SIZE: '1' }));
  try {
    const out: Record<string, Awaited<ReturnType<typeof runShape>>> = {};
    for (const [name, shape] of Object.entries(shapes)) {
      // The pool's one connection: the backend whose /proc figures are this floor's.
      const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const tenantId = (await createTenant(db, { name: `floors-${name}`, tier: 'enterprise' })).id;
      // Warm-up: plans, caches, the client's JIT; then ANALYZE, as the pipeline run does.
      await runShape(db, pid, tenantId, {
        ...shape,
        sendsCount: Math.max(4, Math.ceil(shape.sendsCount / 10)),
      });
      await db.query('ANALYZE');
      out[name] = await runShape(db, pid, tenantId, shape);
    }
    return out;
  } finally {
    await db.close();
  }
}
