import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, eventsOf, insertSmtpMailer, newTenant } from '@mailyard/testkit/fixtures';
/**
 * Connection handling of the send service's SMTP pools against real servers: a pooled connection
 * the server dropped while idle is replaced without a failed attempt, and a server that stalls is
 * abandoned at the delivery deadline and retried.
 */
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

let stores: Stores;
let h: SendHarness;
let tenantId: string;
const receivers: SmtpReceiver[] = [];

beforeAll(async () => {
  stores = await createStores();
  // 3 s SMTP timeouts (a whole delivery may take at most 12 s): far above what a loaded machine
  // needs on loopback, so only the stalled receiver below ever reaches them.
  h = await startSendService(stores, {
    SEND_SMTP_TIMEOUT_MS: '3000',
    SEND_MAX_ATTEMPTS: '2',
    SEND_RETRY_DELAYS: '0.5',
  });
  tenantId = await newTenant(h.ctx.db);
});

afterAll(async () => {
  await h?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await stores?.drop();
});

const send = (mailerId: string, to: string) => ({
  from: { email: 'sender@example.com' },
  to: [{ email: to }],
  mailer_id: mailerId,
  subject: 'x',
  content: [{ type: 'text/plain' as const, value: 'x' }],
});

async function terminal(refId: string) {
  return eventually(async () => {
    const events = await eventsOf(h.ctx.db, refId);
    return events.some((e) => e.event !== 'SMTP_ERROR' || e.payload.details.retry_scheduled === false)
      ? events
      : null;
  }, `terminal event of ${refId}`);
}

it('replaces a pooled connection the server closed while it was idle', async () => {
  // The receiver drops connections idle for 1.5 s: less than the client's 3 s socket timeout, so
  // it is the server that closes the pooled connection.
  const r = await startSmtpReceiver({ idleTimeoutMs: 1_500 });
  receivers.push(r);
  const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port: r.port, secure: 'None' });
  const first = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'one@example.com'));
  expect((await terminal(first.refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
  await eventually(async () => r.closedConnections() >= 1, 'the receiver to drop the idle connection');
  expect(r.connections()).toBe(1);
  const second = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'two@example.com'));
  expect((await terminal(second.refId)).map((e) => [e.event, e.attempt])).toEqual([['MAIL_DELIVERED', 1]]);
  expect(r.messages.map((m) => m.to)).toEqual([['one@example.com'], ['two@example.com']]);
  expect(r.connections()).toBe(2);
});

it('abandons a stalled delivery (socket idle timeout, or the delivery deadline) and retries it', async () => {
  // Answers DATA only after a minute: far beyond the 3 s socket timeout and 12 s deadline.
  const r = await startSmtpReceiver({ dataDelayMs: 60_000 });
  receivers.push(r);
  const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port: r.port, secure: 'None' });
  const { refId } = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'slow@example.com'));
  const events = await terminal(refId);
  expect(events.map((e) => [e.event, e.attempt, e.payload.details.retry_scheduled])).toEqual([
    ['SMTP_ERROR', 1, true],
    ['SMTP_ERROR', 2, false],
  ]);
  expect(events[0]!.payload.details.failed_reason).toBe('Connection to the mail server timed out');
  expect(events[0]!.payload.details.provider_error).toBeTruthy();
});
