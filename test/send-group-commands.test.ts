/**
 * Group-committed sends share `send.email` messages, end to end on the real servers: concurrent
 * POST /v1/email/send requests of several tenants (each with its own caller traceparent) are
 * group-committed by the gateway, their commands become version-2 messages naming several sends
 * on the real bus, and the send service delivers every recipient exactly once to Postfix's
 * smtp-sink, each send's MAIL_DELIVERED event continuing that send's own trace.
 * (The handler on its own against the real bus: services/send/test/group-commands.test.ts.)
 */
import {
  type BusEnvelope,
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND_VERSION,
  decodeEmailEventMessage,
  decodeSendEmailMessage,
  ulid,
} from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import type { Consumer, ServiceContext } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import type { SmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import request from 'supertest';
import { type SendStack, startSendStack } from './support/send-stack';

jest.setTimeout(240_000);

let stack: SendStack;
let sink: SmtpSink;
let ctx: ServiceContext;
let taps: Consumer[] = [];
const commands: BusEnvelope[] = [];
const seen = new Set<string>();
/** Trace id of each MAIL_DELIVERED event's message item, by ref_id. */
const deliveredTrace = new Map<string, string[]>();

beforeAll(async () => {
  stack = await startSendStack('group-commands-test');
  ({ sink, ctx } = stack);
  taps = [
    await ctx.bus.consume(
      {
        queue: `test.send-commands.${ulid()}`,
        bindings: [{ exchange: Exchange.commands, routingKey: RoutingKey.sendEmail }],
      },
      async (d) => {
        // At least once: a message the broker hands over again is counted once.
        if (!seen.has(d.envelope.id)) {
          seen.add(d.envelope.id);
          commands.push(d.envelope);
        }
      },
    ),
    await ctx.bus.consume(
      {
        queue: `test.send-events.${ulid()}`,
        bindings: [{ exchange: Exchange.events, routingKey: 'email.#' }],
      },
      async (d) => {
        const decoded = decodeEmailEventMessage(
          d.envelope.version,
          d.envelope.payload,
          d.envelope.traceparent,
        );
        if (!decoded.ok) throw new Error(decoded.error);
        for (const { event, traceparent } of decoded.events) {
          if (event.event !== 'MAIL_DELIVERED') continue;
          const list = deliveredTrace.get(event.details.ref_id) ?? [];
          list.push(traceparent!.split('-')[1]!);
          deliveredTrace.set(event.details.ref_id, list);
        }
      },
    ),
  ];
});

afterAll(async () => {
  for (const t of taps) await t.cancel();
  await stack?.stop();
});

const received = () => stack.received();

/** The copies each tapped command names, as `tenant/ref_id/copy_id`, with its version. */
function tapped(refs: Set<string>) {
  return commands
    .map((env) => {
      const d = decodeSendEmailMessage(env.version, env.payload);
      if (!d.ok) throw new Error(d.error);
      // First attempts only: a retry (a message of one copy) is not the gateway's grouping.
      const copies = d.sends.flatMap((s) =>
        s.copies.filter((c) => c.attempt === 1).map((c) => `${c.tenant_id}/${c.ref_id}/${c.copy_id}`),
      );
      return { version: env.version, tenants: new Set(d.sends.map((s) => s.tenantId)), copies };
    })
    .filter((c) => c.copies.some((x) => refs.has(x.split('/')[1]!)));
}

async function tenants(n: number, label: string) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const tenant = await createTenant(ctx.db, { name: `${label}${i}`, tier: 'enterprise' });
      const domain = `${label}${i}.example`;
      const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenant.id, {
        domain,
        key: dkimKeyPair(),
      });
      return { apiKey: tenant.apiKey, tenantId: tenant.id, domain, mailerId };
    }),
  );
}

type Tenant = Awaited<ReturnType<typeof tenants>>[number];

/** `count` concurrent sends spread over `ts`, each with its own trace; two copies every third send. */
async function concurrentSends(app: SendStack['app'], ts: Tenant[], count: number, label: string) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const t = ts[i % ts.length]!;
      const traceId = ulid()
        .toLowerCase()
        .padEnd(32, '0')
        .replace(/[^0-9a-f]/g, 'a');
      const to =
        i % 3 === 0
          ? [`${label}${i}a@rcpt.example`, `${label}${i}b@rcpt.example`]
          : [`${label}${i}@rcpt.example`];
      const res = await request(app)
        .post('/v1/email/send')
        .set({ Authorization: `Bearer ${t.apiKey}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
        .send({
          from: { email: `news@${t.domain}` },
          to: to.map((email) => ({ email })),
          mailer_id: t.mailerId,
          subject: 'Hi {{n}}',
          content: [{ type: 'text/plain', value: 'Hello {{n}}' }],
          substitutions: Object.fromEntries(to.map((email) => [email, { n: email }])),
        })
        .expect(200);
      return { refId: res.body.ref_id as string, tenantId: t.tenantId, to, traceId };
    }),
  );
}

it('concurrent sends of several tenants share version-2 messages; every recipient gets one message in its send trace', async () => {
  const ts = await tenants(3, 'grp');
  const sent: Awaited<ReturnType<typeof concurrentSends>> = [];
  // Until a round was group-committed into a message naming sends of several tenants (the
  // gateway groups what arrives while its previous statement runs: a round of concurrent
  // requests almost always is).
  for (let round = 0; round < 8; round++) {
    sent.push(...(await concurrentSends(stack.app, ts, 30, `g${round}r`)));
    const refs = new Set(sent.map((s) => s.refId));
    await eventually(
      () =>
        tapped(refs).reduce((n, c) => n + c.copies.length, 0) === sent.reduce((n, s) => n + s.to.length, 0),
      'every copy commanded',
    );
    if (tapped(refs).some((c) => c.version === SEND_EMAIL_COMMAND_VERSION && c.tenants.size > 1)) break;
  }
  const refs = new Set(sent.map((s) => s.refId));
  const messages = tapped(refs);
  expect(messages.some((c) => c.version === SEND_EMAIL_COMMAND_VERSION && c.tenants.size > 1)).toBe(true);
  // Fewer messages than sends, and every copy commanded once, under its own send's tenant.
  expect(messages.length).toBeLessThan(sent.length);
  const named = messages.flatMap((c) => c.copies).sort();
  const expected = sent
    .flatMap((s) => s.to.map((_, k) => `${s.tenantId}/${s.refId}/${s.refId}.${k + 1}`))
    .sort();
  expect(named).toEqual(expected);

  const recipients = sent.flatMap((s) => s.to);
  await eventually(() => recipients.every((r) => received().has(r)), 'every recipient received');
  await eventually(
    () => sent.every((s) => (deliveredTrace.get(s.refId)?.length ?? 0) >= s.to.length),
    'every MAIL_DELIVERED on the bus',
  );
  const got = received();
  for (const r of recipients) expect([r, got.get(r)]).toEqual([r, 1]);
  for (const s of sent)
    expect([s.refId, new Set(deliveredTrace.get(s.refId))]).toEqual([s.refId, new Set([s.traceId])]);
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM email_logs WHERE ref_id = ANY($1::text[]) AND status = 'MAIL_DELIVERED'`,
    [[...refs]],
  );
  expect(rows[0]!.n).toBe(recipients.length);
});
