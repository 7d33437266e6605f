/**
 * A multi-copy `send.email` command whose copies partly fail is redelivered whole (the handler
 * rejects after every copy settled); on the redelivery the copies already delivered find their
 * attempt recorded and send nothing, so every recipient gets exactly one message at Postfix's
 * smtp-sink. The handler is the production one (createSendHandler with consumerDeps: real
 * loader, event writer, transports, PostgreSQL); the failure is a database error on the load of
 * three copies, on the first delivery only.
 */
import { BusMessages, Exchange, RoutingKey, type SendEmailMessage } from '@mailyard/contracts';
import { type Delivery, type ServiceContext, outboxMessage } from '@mailyard/platform';
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

beforeAll(async () => {
  stack = await startHandlerStack('multi-copy-redelivery');
  ({ ctx, sink } = stack);
});

afterAll(() => stack?.stop());

it('a command redelivered after some copies failed sends only the copies not yet done', async () => {
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
    domain: 'redo.example',
    key: dkimKeyPair(),
  });
  const recipients = Array.from({ length: 30 }, (_, i) => `p${i}@rcpt.example`);
  const { refId, copyIds } = await acceptSend(ctx.db, tenantId, {
    from: { email: 'news@redo.example' },
    to: recipients.map((email) => ({ email })),
    mailer_id: mailerId,
    subject: 'Hello {{name}}',
    content: [{ type: 'text/plain', value: 'Hi {{name}}' }],
    substitutions: Object.fromEntries(recipients.map((r, i) => [r, { name: `n${i}` }])),
  });
  expect(copyIds).toHaveLength(recipients.length);
  const cmd: SendEmailMessage = {
    sends: [{ tenant_id: tenantId, ref_id: refId, copy_ids: copyIds }],
    attempt: 1,
  };

  const deps = consumerDeps(ctx, sendSettings(ctx.config), stack.transports);
  const failing = new Set(copyIds.slice(3, 6));
  const loader = deps.copies;
  let firstDelivery = true;
  deps.copies = {
    load: (k) =>
      firstDelivery && failing.has(k.copy_id)
        ? Promise.reject(new Error('connection terminated unexpectedly'))
        : loader.load(k),
  } as CopyLoader;
  const handler = createSendHandler(deps);
  const delivery = (failures: number): Delivery<unknown> => ({
    envelope: outboxMessage(BusMessages.sendEmail, cmd, { tenantId }).envelope,
    exchange: Exchange.commands,
    routingKey: RoutingKey.sendEmail,
    failures,
    redelivered: false,
  });

  // The first delivery fails, but only after every other copy was delivered and recorded.
  await expect(handler(delivery(0))).rejects.toThrow('connection terminated');
  await sink.waitForMessages(recipients.length - failing.size);
  firstDelivery = false;
  await handler(delivery(1));
  // A third delivery (an ack lost after the second) sends nothing either.
  await handler(delivery(2));
  await sink.waitForMessages(recipients.length);
  const got = stack.received();
  for (const r of recipients) expect([r, got.get(r)]).toEqual([r, 1]);
  expect(sink.messages()).toHaveLength(recipients.length);
  const { rows } = await ctx.db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM email_logs WHERE ref_id = $1 GROUP BY status',
    [refId],
  );
  expect(rows).toEqual([{ status: 'MAIL_DELIVERED', n: recipients.length }]);
});
