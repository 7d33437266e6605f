/**
 * A command redelivered while the first delivery is still running makes two send services
 * deliver the same copy at the same time. Each runs the production handler path (processCommand
 * with its own loader, caches, event writer and SMTP pools) against the same PostgreSQL; the
 * receiver accepts one of the two messages and refuses the other for good. Only one outcome may
 * be recorded per recipient: exactly one terminal event, one published event, and a log row that
 * agrees with it.
 */
import { Exchange } from '@mailyard/contracts';
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { processCommand } from '../src/consumer';
import { consumerDeps, sendTokens } from '../src/index';
import { sendSettings } from '../src/settings';
import { Transports } from '../src/transports';

jest.setTimeout(120_000);

let stores: Stores;
let ctx: ServiceContext;
let receiver: SmtpReceiver;
const transports: Transports[] = [];

beforeAll(async () => {
  stores = await createStores();
  ctx = await openContext(
    configFrom({
      LOG_LEVEL: 'error',
      ...stores.env,
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      SEND_MAX_ATTEMPTS: '3',
    }),
    createLogger('single-winner', 'error'),
  );
  // Both deliveries are in flight together (no DATA is answered before both bodies arrived: a
  // fixed delay lost the race to a slow load on a busy machine, and the second process then
  // skipped the recorded copy); the first DATA is accepted, the second refused permanently: the
  // two processes would record conflicting outcomes.
  receiver = await startSmtpReceiver({
    holdData: { bodies: 2, maxMs: 20_000 },
    onData: (_m, n) => (n % 2 === 0 ? [550, '5.1.1 Mailbox does not exist'] : undefined),
  });
});

afterAll(async () => {
  for (const t of transports) t.close();
  await receiver?.close();
  await closeContext(ctx);
  await stores?.drop();
});

/** A second, independent send service (process) on the same database. */
function service() {
  const settings = sendSettings(ctx.config);
  const t = new Transports(settings, sendTokens(ctx, settings));
  transports.push(t);
  return consumerDeps(ctx, settings, t);
}

it('two processes delivering the same copy at once record one outcome per recipient', async () => {
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, {
    port: receiver.port,
    secure: 'None',
  });
  const { refId, commands } = await acceptSend(ctx.db, tenantId, {
    from: { email: 'sender@example.com' },
    to: [{ email: 'one@example.com' }],
    cc: [{ email: 'two@example.com' }],
    mailer_id: mailerId,
    subject: 'Hello',
    content: [{ type: 'text/plain', value: 'Hello' }],
  });
  const cmd = commands[0]!;
  const dataBefore = receiver.dataCount();
  await Promise.all([processCommand(service(), cmd), processCommand(service(), cmd)]);
  // Both really delivered (the race happened): one message accepted, one refused.
  expect(receiver.dataCount() - dataBefore).toBe(2);

  const events = await eventsOf(ctx.db, refId);
  expect(events).toHaveLength(1);
  const [event] = events;
  expect(['MAIL_DELIVERED', 'SMTP_ERROR']).toContain(event!.event);
  expect([...event!.payload.details.email].sort()).toEqual(['one@example.com', 'two@example.com']);

  const logs = await logsOf(ctx.db, refId);
  const status = event!.event === 'MAIL_DELIVERED' ? 'MAIL_DELIVERED' : 'FAILED';
  expect(logs.map((l) => [l.recipient, l.status, l.last_event])).toEqual([
    ['one@example.com', status, event!.event],
    ['two@example.com', status, event!.event],
  ]);
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE exchange = $1 AND message->'payload'->'details'->>'ref_id' = $2`,
    [Exchange.events, refId],
  );
  expect(rows[0]!.n).toBe(1);
});
