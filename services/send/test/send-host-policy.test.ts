/**
 * With MAILER_ALLOW_PRIVATE_HOSTS off, an smtp mailer whose host resolves to a private or
 * loopback address (set before the policy, or DNS that changed since) is never connected to.
 */
import { type SmtpReceiver, startSmtpReceiver } from '../../../test/support/peers/smtp-receiver';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from './support/fixtures';
import { type SendHarness, type Stores, createStores, eventually, startSendService } from './support/harness';

jest.setTimeout(60_000);

let stores: Stores;
let h: SendHarness;
let r: SmtpReceiver;

beforeAll(async () => {
  stores = await createStores();
  h = await startSendService(stores, { MAILER_ALLOW_PRIVATE_HOSTS: '0' });
  r = await startSmtpReceiver();
});

afterAll(async () => {
  await h?.close();
  await r?.close();
  await stores?.drop();
});

it('ends the copy with a final SMTP_ERROR and connects to nothing', async () => {
  const tenantId = await newTenant(h.ctx.db);
  const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port: r.port, secure: 'None' });
  const { refId } = await acceptSend(h.ctx.db, tenantId, {
    from: { email: 'sender@example.com' },
    mailer_id: mailerId,
    to: [{ email: 'someone@example.com' }],
    subject: 'Hi',
    content: [{ type: 'text/plain', value: 'hello' }],
  });
  const events = await eventually(async () => {
    const all = await eventsOf(h.ctx.db, refId);
    return all.length > 0 ? all : null;
  }, 'the SMTP_ERROR event');
  expect(events).toHaveLength(1);
  expect(events[0]!.event).toBe('SMTP_ERROR');
  expect(events[0]!.payload.details).toMatchObject({
    retry_scheduled: false,
    failed_reason: 'Mailer host is not allowed',
    provider_error: expect.stringContaining('resolves to a private, loopback or link-local address'),
  });
  const [log] = await logsOf(h.ctx.db, refId);
  expect(log).toMatchObject({ status: 'FAILED', failure_reason: 'Mailer host is not allowed' });
  expect(r.tcpConnections()).toBe(0);
  expect(r.connections()).toBe(0);
  expect(r.dataCount()).toBe(0);
});
