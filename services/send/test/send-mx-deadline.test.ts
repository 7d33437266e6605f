import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, dkimKeyPair, eventsOf, insertDomainMailer, newTenant } from '@mailyard/testkit/fixtures';
/**
 * Direct-to-MX delivery has one total deadline per recipient domain (SEND_MX_DELIVERY_TIMEOUT_MS),
 * whatever the per-connection timeouts allow. The recipient domain has two MX hosts (found
 * through a real dnsmasq), both served by a real SMTP server that stalls before answering DATA
 * far longer than the test waits; the socket and per-connection timeouts are long, so only the
 * total deadline can end the delivery. The test waits for the outcome (no timing assertion):
 * a timeout failure that names the deadline, and the second MX never tried.
 */
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

let stores: Stores;
let dns: Dnsmasq;
let mx: SmtpReceiver;
let h: SendHarness;

beforeAll(async () => {
  stores = await createStores();
  dns = await startDnsmasq({
    mx: [
      { name: 'stall.test', host: 'mx1.stall.test', preference: 10 },
      { name: 'stall.test', host: 'mx2.stall.test', preference: 20 },
    ],
    a: [
      { name: 'mx1.stall.test', ip: '127.0.0.1' },
      { name: 'mx2.stall.test', ip: '127.0.0.1' },
    ],
  });
  mx = await startSmtpReceiver({ dataDelayMs: 600_000 });
  h = await startSendService(stores, {
    DNS_SERVERS: dns.server,
    MX_PORT: String(mx.port),
    // Per connection: 60 s idle, 240 s per delivery; the whole MX delivery: 1.5 s.
    SEND_SMTP_TIMEOUT_MS: '60000',
    SEND_MX_DELIVERY_TIMEOUT_MS: '1500',
    // The MX hosts are on loopback: the opt-out of the MX address policy.
    MX_ALLOW_PRIVATE_HOSTS: '1',
    SEND_MAX_ATTEMPTS: '1',
  });
});

afterAll(async () => {
  await h?.close();
  await mx?.close();
  await dns?.stop();
  await stores?.drop();
});

it('ends a stalled direct-MX delivery at SEND_MX_DELIVERY_TIMEOUT_MS and tries no further MX', async () => {
  const tenantId = await newTenant(h.ctx.db);
  const mailerId = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, {
    domain: 'brand.test',
    key: dkimKeyPair(),
  });
  const { refId } = await acceptSend(h.ctx.db, tenantId, {
    from: { email: 'news@brand.test' },
    to: [{ email: 'ann@stall.test' }],
    mailer_id: mailerId,
    subject: 'Hello',
    content: [{ type: 'text/plain', value: 'Hello' }],
  });
  const events = await eventually(async () => {
    const rows = await eventsOf(h.ctx.db, refId);
    return rows.length > 0 ? rows : null;
  }, 'the outcome of the stalled delivery');
  expect(events.map((e) => [e.event, e.payload.details.retry_scheduled])).toEqual([['SMTP_ERROR', false]]);
  expect(events[0]!.payload.details).toMatchObject({
    failed_reason: 'Connection to the mail server timed out',
    provider_error: 'Delivery to the mail servers of stall.test did not finish within 1500 ms',
  });
  // The stalled server got the message data from the first MX only.
  expect(mx.connections()).toBe(1);
});
