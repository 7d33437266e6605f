import { eventually } from '@mailyard/testkit/eventually';
import {
  type EventRow,
  acceptSend,
  dkimKeyPair,
  eventsOf,
  insertDomainMailer,
  insertSmtpMailer,
  logsOf,
  newTenant,
} from '@mailyard/testkit/fixtures';
/**
 * SSRF guard of the send service (docs/architecture.md, security 3): with MAILER_ALLOW_PRIVATE_HOSTS
 * and MX_ALLOW_PRIVATE_HOSTS off, an SMTP mailer host or a recipient's MX that is, or resolves
 * (through DNS_SERVERS, a real dnsmasq) to, a loopback/private/metadata address is never connected
 * to — the receiver on loopback counts TCP connections, not only DATA — and the failure never
 * names the address. With the opt-out, a name is resolved with the project's resolver and the
 * connection goes to the address it resolved to.
 */
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

const REFUSED = 'Mail server is not allowed (private, loopback or reserved address)';

let dns: Dnsmasq;
let r: SmtpReceiver;

beforeAll(async () => {
  r = await startSmtpReceiver();
  dns = await startDnsmasq({
    mx: [
      { name: 'evil.test', host: 'mx.evil.test', preference: 10 },
      { name: 'meta.test', host: 'mx.meta.test', preference: 10 },
    ],
    a: [
      { name: 'mx.evil.test', ip: '127.0.0.1' },
      { name: 'mx.meta.test', ip: '169.254.169.254' },
      // no MX: the A record is the mail server (RFC 5321 5.1), on loopback
      { name: 'implicit.test', ip: '127.0.0.1' },
      { name: 'smtp.internal.test', ip: '127.0.0.1' },
      { name: 'smtp.ten.test', ip: '10.20.30.40' },
    ],
  });
});

afterAll(async () => {
  await r?.close();
  await dns?.stop();
});

const send = (mailerId: string, to: string, from = 'sender@example.com') => ({
  from: { email: from },
  mailer_id: mailerId,
  to: [{ email: to }],
  subject: 'Hi',
  content: [{ type: 'text/plain' as const, value: 'hello' }],
});

async function terminal(h: SendHarness, refId: string): Promise<EventRow> {
  return eventually(async () => {
    const all = await eventsOf(h.ctx.db, refId);
    return all.find((e) => e.event !== 'SMTP_ERROR' || e.payload.details.retry_scheduled === false);
  }, `the terminal event of ${refId}`);
}

describe('private targets refused (flags off)', () => {
  let stores: Stores;
  let h: SendHarness;
  let tenantId: string;

  beforeAll(async () => {
    stores = await createStores();
    h = await startSendService(stores, {
      MAILER_ALLOW_PRIVATE_HOSTS: '0',
      MX_ALLOW_PRIVATE_HOSTS: '0',
      DNS_SERVERS: dns.server,
      MX_PORT: String(r.port),
    });
    tenantId = await newTenant(h.ctx.db);
  });
  afterAll(async () => {
    await h?.close();
    await stores?.drop();
  });

  it.each(['127.0.0.1', 'smtp.internal.test', 'smtp.ten.test', 'localhost'])(
    'an SMTP mailer at %s ends with a final SMTP_ERROR and connects to nothing',
    async (host) => {
      const before = r.connections();
      const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, {
        host,
        port: r.port,
        secure: 'None',
      });
      const { refId } = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'someone@example.com'));
      const event = await terminal(h, refId);
      expect(event.event).toBe('SMTP_ERROR');
      expect(event.payload.details).toMatchObject({ retry_scheduled: false, failed_reason: REFUSED });
      expect(event.payload.details.provider_error).toContain(host);
      for (const address of ['127.0.0.1', '10.20.30.40'])
        if (address !== host) expect(JSON.stringify(event.payload)).not.toContain(address);
      const [log] = await logsOf(h.ctx.db, refId);
      expect(log).toMatchObject({ status: 'FAILED', failure_reason: REFUSED });
      expect(r.connections()).toBe(before);
    },
  );

  it('an SMTP mailer whose host does not resolve fails without connecting', async () => {
    const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, {
      host: 'metadata.google.internal',
      port: r.port,
    });
    const { refId } = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'someone@example.com'));
    const event = await terminal(h, refId);
    expect(event.payload.details).toMatchObject({
      retry_scheduled: false,
      failed_reason: 'Mail server host does not resolve',
    });
    expect(r.connections()).toBe(0);
  });

  it.each([
    ['an MX resolving to loopback', 'ann@evil.test', 'mx.evil.test'],
    ['an MX resolving to the metadata address', 'ann@meta.test', 'mx.meta.test'],
    ['the A fallback on loopback', 'bob@implicit.test', 'implicit.test'],
  ])('direct-to-MX: %s gets nothing, the DKIM-signed copy stays home', async (_what, to, mxHost) => {
    const key = dkimKeyPair();
    const domain = `brand-${Math.random().toString(36).slice(2, 8)}.test`;
    const mailerId = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, { domain, key });
    const { refId } = await acceptSend(h.ctx.db, tenantId, send(mailerId, to, `news@${domain}`));
    const event = await terminal(h, refId);
    expect(event.event).toBe('SMTP_ERROR');
    expect(event.payload.details).toMatchObject({ retry_scheduled: false, failed_reason: REFUSED });
    expect(event.payload.details.provider_error).toContain(mxHost);
    expect(JSON.stringify(event.payload)).not.toMatch(/127\.0\.0\.1|169\.254/);
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({ status: 'FAILED', failure_reason: REFUSED });
    expect(r.connections()).toBe(0);
    expect(r.dataCount()).toBe(0);
  });
});

describe('with MAILER_ALLOW_PRIVATE_HOSTS=1', () => {
  let stores: Stores;
  let h: SendHarness;

  beforeAll(async () => {
    stores = await createStores();
    h = await startSendService(stores, { MAILER_ALLOW_PRIVATE_HOSTS: '1', DNS_SERVERS: dns.server });
  });
  afterAll(async () => {
    await h?.close();
    await stores?.drop();
  });

  it('resolves the mailer host through DNS_SERVERS and delivers to the address it resolved to', async () => {
    const tenantId = await newTenant(h.ctx.db);
    // smtp.internal.test exists only in dnsmasq: the system resolver would not find it.
    const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, {
      host: 'smtp.internal.test',
      port: r.port,
      secure: 'None',
    });
    const before = r.connections();
    const { refId } = await acceptSend(h.ctx.db, tenantId, send(mailerId, 'someone@example.com'));
    const event = await terminal(h, refId);
    expect(event.event).toBe('MAIL_DELIVERED');
    expect(r.connections()).toBeGreaterThan(before);
    expect((await r.waitForMessages(1))[0]!.to).toEqual(['someone@example.com']);
  });
});
