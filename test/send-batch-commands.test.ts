/**
 * Multi-copy send commands on the real servers: a batch with substitutions (one copy per `to`
 * recipient) accepted by the gateway becomes ceil(N / 100) (the gateway's COPIES_PER_COMMAND) `send.email`
 * messages on the real bus, and the send service delivers every recipient exactly once to
 * Postfix's smtp-sink. (A multi-copy command redelivered after a partial failure:
 * services/send/test/multi-copy-redelivery.test.ts.)
 */
import { Exchange, RoutingKey, type SendEmailMessage, ulid } from '@mailyard/contracts';
import type { Consumer, ServiceContext } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import type { SmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import request from 'supertest';
import { type SendStack, startSendStack } from './support/send-stack';

jest.setTimeout(180_000);

let stack: SendStack;
let sink: SmtpSink;
let ctx: ServiceContext;
let app: SendStack['app'];
let commandTap: Consumer;
/** Every first-attempt send.email message tapped, by envelope id (at-least-once: a duplicate is allowed). */
const commands = new Map<string, SendEmailMessage>();

beforeAll(async () => {
  stack = await startSendStack('batch-commands-test');
  ({ sink, ctx, app } = stack);
  // A second queue bound to the commands: a copy of every send.email message published.
  commandTap = await ctx.bus.consume(
    {
      queue: `test.send-commands.${ulid()}`,
      bindings: [{ exchange: Exchange.commands, routingKey: RoutingKey.sendEmail }],
    },
    async (d) => {
      const command = d.envelope.payload as SendEmailMessage;
      if (command.attempt === 1) commands.set(d.envelope.id, command);
    },
  );
});

afterAll(async () => {
  await commandTap?.cancel();
  await stack?.stop();
});

async function domainMailer(tenantId: string, domain: string) {
  const key = dkimKeyPair();
  return insertDomainMailer(ctx.db, ctx.sealer, tenantId, { domain, key });
}

function batch(mailerId: string, domain: string, recipients: string[]) {
  return {
    from: { email: `news@${domain}` },
    to: recipients.map((email) => ({ email })),
    mailer_id: mailerId,
    subject: 'Hello {{name}}',
    content: [{ type: 'text/plain', value: 'Hi {{name}}' }],
    substitutions: Object.fromEntries(recipients.map((r, i) => [r, { name: `n${i}` }])),
  };
}

const received = () => stack.received();

it('a 250-recipient batch is ceil(250 / 100) commands and every recipient gets exactly one message', async () => {
  const tenant = await createTenant(ctx.db, { name: 'batch', tier: 'enterprise' });
  const mailerId = await domainMailer(tenant.tenantId, 'batch.example');
  const recipients = Array.from({ length: 250 }, (_, i) => `r${i}@rcpt.example`);
  const before = sink.messages().length;
  const res = await request(app)
    .post('/v1/email/send')
    .set({ Authorization: `Bearer ${tenant.apiKey}` })
    .send(batch(mailerId, 'batch.example', recipients))
    .expect(200);
  const refId = res.body.ref_id as string;

  await sink.waitForMessages(before + recipients.length);
  await eventually(async () => {
    const { rows } = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM email_logs WHERE ref_id = $1 AND status = 'MAIL_DELIVERED'`,
      [refId],
    );
    return rows[0]!.n === recipients.length;
  }, 'every log row delivered');
  const mine = () => [...commands.values()].filter((c) => c.sends.some((s) => s.ref_id === refId));
  await eventually(() => mine().length >= 3, 'the commands tapped');
  // Three distinct commands (the relay publishes them in no promised order) that split the
  // 250 copies between them: each copy in exactly one.
  const copyLists = mine().map((c) => c.sends.filter((s) => s.ref_id === refId).flatMap((s) => s.copy_ids));
  expect(copyLists.map((ids) => ids.length).sort((a, b) => b - a)).toEqual([100, 100, 50]);
  expect(new Set(copyLists.flat()).size).toBe(recipients.length);
  const got = received();
  for (const r of recipients) expect([r, got.get(r)]).toEqual([r, 1]);
  // Each copy has its own substitutions.
  const toR7 = sink.messages().find((m) => m.to.includes('r7@rcpt.example'))!;
  expect(toR7.message).toContain('Subject: Hello n7');
});
