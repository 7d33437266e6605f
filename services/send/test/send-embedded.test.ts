/**
 * `pnpm start` with nothing configured runs the send service on PGlite and the in-process bus:
 * the same SQL (batched statements included) and the same delayed retries must work there.
 */
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { start } from '../src/index';

jest.setTimeout(120_000);

let ctx: ServiceContext;
let stop: () => Promise<void>;
let receiver: SmtpReceiver;
let tenantId: string;
let mailerId: string;

beforeAll(async () => {
  // Defers the first message it sees (451), accepts everything after.
  receiver = await startSmtpReceiver({ onData: (_m, n) => (n === 1 ? [451, '4.3.0 Try again'] : undefined) });
  const config = configFrom({
    DATABASE_URL: '',
    AMQP_URL: '',
    REDIS_URL: '',
    DATA_DIR: 'memory://',
    SECRET_KEY: '5c'.repeat(32),
    SERVICE_DOMAIN: 'mailyard.test',
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    SEND_RETRY_DELAYS: '0.2',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
  });
  ctx = await openContext(config, createLogger('send-embedded-test', 'error'));
  const service = await start(ctx);
  stop = () => service.stop();
  tenantId = await newTenant(ctx.db);
  mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, { port: receiver.port, secure: 'None' });
});

afterAll(async () => {
  await stop?.();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
});

it('retries through the in-process bus and delivers on PGlite', async () => {
  const { refId } = await acceptSend(ctx.db, tenantId, {
    from: { email: 'sender@example.com' },
    to: [{ email: 'one@example.com' }, { email: 'two@example.com' }],
    mailer_id: mailerId,
    subject: 'Hi {{name}}',
    content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
    substitutions: { 'one@example.com': { name: 'One' }, 'two@example.com': { name: 'Two' } },
  });
  await eventually(
    async () => (await logsOf(ctx.db, refId)).every((l) => l.status === 'MAIL_DELIVERED'),
    'delivered',
  );
  const events = await eventsOf(ctx.db, refId);
  expect(events.map((e) => [e.event, e.attempt]).sort()).toEqual([
    ['MAIL_DELIVERED', 1],
    ['MAIL_DELIVERED', 2],
    ['SMTP_ERROR', 1],
  ]);
  const bodies = receiver.messages.map((m) => m.raw.toString());
  expect(bodies.some((b) => b.includes('Hello One'))).toBe(true);
  expect(bodies.some((b) => b.includes('Hello Two'))).toBe(true);
});
