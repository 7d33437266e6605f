/**
 * `send.email` version 2 (copies of several sends, of several tenants, in one message) on the real
 * servers: published to a private queue on the real RabbitMQ vhost, consumed by the production
 * handler (createSendHandler with consumerDeps: real loader, event writer, transports,
 * PostgreSQL), delivered to Postfix's smtp-sink. Shows that every copy of every send is delivered
 * exactly once, each under its own tenant and in its own send's trace; that an item naming
 * another tenant's send loads nothing; that a transient failure of one copy makes the broker
 * redeliver the whole message and the copies already done are skipped; and that a send service
 * older than version 2 (it reads every send.email payload as version 1) parks the message
 * without sending anything. And that a version-1 message of the previous release still waiting
 * in the queue (a delayed retry, one copy) is delivered exactly once, in its envelope's trace.
 */
import {
  type BusEnvelope,
  BusMessages,
  Exchange,
  type SendEmailMessage,
  decodeEmailEventMessage,
  ulid,
} from '@mailyard/contracts';
import {
  type Consumer,
  type Delivery,
  type ServiceContext,
  envelope,
  outboxMessage,
} from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, dkimKeyPair, insertDomainMailer, newTenant } from '@mailyard/testkit/fixtures';
import type { SmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { createSendHandler } from '../src/consumer';
import { consumerDeps } from '../src/index';
import type { CopyLoader } from '../src/load-copy';
import { sendSettings } from '../src/settings';
import { type HandlerStack, startHandlerStack } from './support/handler-stack';

jest.setTimeout(120_000);

let stack: HandlerStack;
let ctx: ServiceContext;
let sink: SmtpSink;
const consumers: Consumer[] = [];

beforeAll(async () => {
  stack = await startHandlerStack('group-commands');
  ({ ctx, sink } = stack);
});

afterAll(async () => {
  for (const c of consumers) await c.cancel();
  await stack?.stop();
});

const received = () => stack.received();
/** The production handler on the stack (real loader, event writer, transports). */
const productionDeps = () => consumerDeps(ctx, sendSettings(ctx.config), stack.transports);

const TRACE = (n: number) => `00-${String(n).padStart(32, 'a')}-${'b'.repeat(16)}-01`;
const traceIdOf = (tp: string | undefined) => tp?.split('-')[1];

interface Tenant {
  tenantId: string;
  domain: string;
  mailerId: string;
}

async function tenantWithMailer(domain: string): Promise<Tenant> {
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, { domain, key: dkimKeyPair() });
  return { tenantId, domain, mailerId };
}

/** A stored send of `t` with one copy per recipient (substitutions); its commands are not published. */
async function storedSend(t: Tenant, recipients: string[]) {
  return acceptSend(ctx.db, t.tenantId, {
    from: { email: `news@${t.domain}` },
    to: recipients.map((email) => ({ email })),
    mailer_id: t.mailerId,
    subject: 'Hello {{name}}',
    content: [{ type: 'text/plain', value: 'Hi {{name}}' }],
    substitutions: Object.fromEntries(recipients.map((r, i) => [r, { name: `n${i}` }])),
  });
}

/**
 * A private queue on the real bus consumed by `handler` (retries after 50 ms), and a publish
 * into it: the broker delivers, redelivers and parks as it does for `send.commands`.
 */
async function privateQueue(handler: (d: Delivery<unknown>) => Promise<void>) {
  const routingKey = `test.send-group.${ulid()}`;
  const queue = `test.send-group.${ulid()}`;
  consumers.push(
    await ctx.bus.consume(
      { queue, bindings: [{ exchange: Exchange.commands, routingKey }], retryDelaysMs: [50, 50, 50] },
      handler,
    ),
  );
  return { queue, publish: (env: BusEnvelope) => ctx.bus.publish(Exchange.commands, routingKey, env) };
}

/** The group message as the gateway writes it (no envelope tenant: the items span tenants). */
function groupEnvelope(group: SendEmailMessage): BusEnvelope {
  return outboxMessage(BusMessages.sendEmail, group).envelope;
}

/** The trace ids of the email.event messages the send service wrote for `refId`, by event. */
async function eventTraces(refId: string): Promise<string[]> {
  const { rows } = await ctx.db.query<{ message: BusEnvelope }>(
    "SELECT message FROM outbox WHERE routing_key LIKE 'email.%' ORDER BY id",
  );
  const out: string[] = [];
  for (const { message } of rows) {
    const d = decodeEmailEventMessage(message.version, message.payload, message.traceparent);
    if (!d.ok) throw new Error(d.error);
    for (const e of d.events) if (e.event.details.ref_id === refId) out.push(traceIdOf(e.traceparent)!);
  }
  return out;
}

async function deliveredLogs(refId: string): Promise<Array<{ tenant_id: string; n: number }>> {
  const { rows } = await ctx.db.query<{ tenant_id: string; n: number }>(
    `SELECT tenant_id, count(*)::int AS n FROM email_logs WHERE ref_id = $1 AND status = 'MAIL_DELIVERED'
      GROUP BY tenant_id`,
    [refId],
  );
  return rows;
}

it('delivers every copy of every send of one message exactly once, each under its own tenant and trace', async () => {
  const a = await tenantWithMailer('group-a.example');
  const b = await tenantWithMailer('group-b.example');
  const aRcpt = Array.from({ length: 5 }, (_, i) => `ga${i}@rcpt.example`);
  const bRcpt = Array.from({ length: 3 }, (_, i) => `gb${i}@rcpt.example`);
  const sendA = await storedSend(a, aRcpt);
  const sendB = await storedSend(b, bRcpt);
  // A forged item: tenant a naming b's send. It must load nothing (not b's copy under a).
  const sendB2 = await storedSend(b, ['forged@rcpt.example']);
  const { publish } = await privateQueue(createSendHandler(productionDeps()));
  const before = sink.messages().length;
  await publish(
    groupEnvelope({
      sends: [
        { tenant_id: a.tenantId, ref_id: sendA.refId, copy_ids: sendA.copyIds, traceparent: TRACE(1) },
        { tenant_id: b.tenantId, ref_id: sendB.refId, copy_ids: sendB.copyIds, traceparent: TRACE(2) },
        { tenant_id: a.tenantId, ref_id: sendB2.refId, copy_ids: sendB2.copyIds, traceparent: TRACE(3) },
      ],
      attempt: 1,
    }),
  );

  await sink.waitForMessages(before + aRcpt.length + bRcpt.length);
  await eventually(async () => {
    const [la, lb] = [await deliveredLogs(sendA.refId), await deliveredLogs(sendB.refId)];
    return la[0]?.n === aRcpt.length && lb[0]?.n === bRcpt.length;
  }, 'both sends delivered');
  expect(await deliveredLogs(sendA.refId)).toEqual([{ tenant_id: a.tenantId, n: aRcpt.length }]);
  expect(await deliveredLogs(sendB.refId)).toEqual([{ tenant_id: b.tenantId, n: bRcpt.length }]);
  const got = received();
  for (const r of [...aRcpt, ...bRcpt]) expect([r, got.get(r)]).toEqual([r, 1]);
  // Each copy from its own tenant's mailer (domain), with its own substitutions.
  const toGb1 = sink.messages().find((m) => m.to.includes('gb1@rcpt.example'))!;
  expect(toGb1.message).toContain('From: news@group-b.example');
  expect(toGb1.message).toContain('Subject: Hello n1');
  // The forged item: nothing sent, nothing recorded for b's send.
  expect(got.get('forged@rcpt.example')).toBeUndefined();
  const { rows: forged } = await ctx.db.query(
    `SELECT status FROM email_logs WHERE ref_id = $1 AND status <> 'QUEUED'`,
    [sendB2.refId],
  );
  expect(forged).toEqual([]);
  // Every event continues its own send's trace, not the message's or another item's.
  const aTraces = await eventTraces(sendA.refId);
  const bTraces = await eventTraces(sendB.refId);
  expect(aTraces.length).toBeGreaterThan(0);
  expect(new Set(aTraces)).toEqual(new Set([traceIdOf(TRACE(1))]));
  expect(new Set(bTraces)).toEqual(new Set([traceIdOf(TRACE(2))]));
});

it('a transient failure of one copy redelivers the message through the broker; the copies done are skipped', async () => {
  const a = await tenantWithMailer('redo-a.example');
  const b = await tenantWithMailer('redo-b.example');
  const aRcpt = Array.from({ length: 6 }, (_, i) => `ra${i}@rcpt.example`);
  const bRcpt = Array.from({ length: 4 }, (_, i) => `rb${i}@rcpt.example`);
  const sendA = await storedSend(a, aRcpt);
  const sendB = await storedSend(b, bRcpt);
  const deps = productionDeps();
  const loader = deps.copies;
  // b's third copy fails to load on the first delivery only (a database error: retried).
  const failing = sendB.copyIds[2]!;
  let deliveries = 0;
  let failed = 0;
  deps.copies = {
    load: (k) => {
      if (k.copy_id === failing && failed === 0) {
        failed++;
        return Promise.reject(new Error('connection terminated unexpectedly'));
      }
      return loader.load(k);
    },
  } as CopyLoader;
  const handler = createSendHandler(deps);
  const { queue, publish } = await privateQueue((d) => {
    deliveries++;
    return handler(d);
  });
  const before = sink.messages().length;
  await publish(
    groupEnvelope({
      sends: [
        { tenant_id: a.tenantId, ref_id: sendA.refId, copy_ids: sendA.copyIds, traceparent: TRACE(4) },
        { tenant_id: b.tenantId, ref_id: sendB.refId, copy_ids: sendB.copyIds, traceparent: TRACE(5) },
      ],
      attempt: 1,
    }),
  );

  await sink.waitForMessages(before + aRcpt.length + bRcpt.length);
  await eventually(async () => (await deliveredLogs(sendB.refId))[0]?.n === bRcpt.length, 'b delivered');
  await eventually(() => deliveries >= 2, 'the broker redelivered the message');
  expect(failed).toBe(1);
  const got = received();
  for (const r of [...aRcpt, ...bRcpt]) expect([r, got.get(r)]).toEqual([r, 1]);
  expect(sink.messages().length - before).toBe(aRcpt.length + bRcpt.length);
  expect(await deliveredLogs(sendA.refId)).toEqual([{ tenant_id: a.tenantId, n: aRcpt.length }]);
  expect(await ctx.bus.parked(queue)).toEqual([]);
});

it('a send service older than version 2 parks the group: nothing sent, nothing acknowledged away', async () => {
  const a = await tenantWithMailer('old-a.example');
  const sendA = await storedSend(a, ['old0@rcpt.example', 'old1@rcpt.example']);
  const handler = createSendHandler(productionDeps());
  // An older service never looked at the envelope version: it reads every payload as version 1.
  const olderService = (d: Delivery<unknown>) => handler({ ...d, envelope: { ...d.envelope, version: 1 } });
  const { queue, publish } = await privateQueue(olderService);
  const env = groupEnvelope({
    sends: [{ tenant_id: a.tenantId, ref_id: sendA.refId, copy_ids: sendA.copyIds, traceparent: TRACE(6) }],
    attempt: 1,
  });
  await publish(env);

  const parked = await eventually(async () => {
    const p = await ctx.bus.parked(queue);
    return p.length > 0 ? p : null;
  }, 'the group parked');
  expect(parked).toHaveLength(1);
  expect(parked[0]!.envelope).toMatchObject({ id: env.id, version: 2, payload: env.payload });
  expect(parked[0]!.reason).toMatch(/permanent error: invalid send command/);
  expect(received().get('old0@rcpt.example')).toBeUndefined();
  const { rows } = await ctx.db.query(
    `SELECT status FROM email_logs WHERE ref_id = $1 AND status <> 'QUEUED'`,
    [sendA.refId],
  );
  expect(rows).toEqual([]);

  // The same message moved back to an upgraded service is delivered.
  const { publish: upgraded } = await privateQueue(handler);
  await upgraded(parked[0]!.envelope);
  await eventually(async () => (await deliveredLogs(sendA.refId))[0]?.n === 2, 'delivered after the upgrade');
});

it('a version-1 message of the previous release (a delayed retry of one copy) is delivered exactly once', async () => {
  const a = await tenantWithMailer('v1-a.example');
  const sendA = await storedSend(a, ['v1a@rcpt.example', 'v1b@rcpt.example']);
  const { queue, publish } = await privateQueue(createSendHandler(productionDeps()));
  const before = sink.messages().length;
  // Exactly what the previous release's send service published for a retry.
  const old = envelope(
    'send.email',
    { ref_id: sendA.refId, tenant_id: a.tenantId, copy_id: sendA.copyIds[0]!, attempt: 1 },
    { version: 1, tenantId: a.tenantId, parentTraceparent: TRACE(7) },
  );
  await publish(old);
  await eventually(async () => (await deliveredLogs(sendA.refId))[0]?.n === 1, 'the old message delivered');
  // Delivered again (an ack lost): the attempt is recorded, nothing is sent twice.
  await publish(old);
  await eventually(
    async () => (await eventTraces(sendA.refId)).length > 0 && (await ctx.bus.parked(queue)).length === 0,
    'events recorded',
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(received().get('v1a@rcpt.example')).toBe(1);
  expect(received().get('v1b@rcpt.example')).toBeUndefined();
  expect(sink.messages().length - before).toBe(1);
  expect(await deliveredLogs(sendA.refId)).toEqual([{ tenant_id: a.tenantId, n: 1 }]);
  expect(new Set(await eventTraces(sendA.refId))).toEqual(new Set([traceIdOf(TRACE(7))]));
  expect(await ctx.bus.parked(queue)).toEqual([]);
});
