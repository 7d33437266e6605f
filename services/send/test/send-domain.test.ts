/**
 * Domain mailers: DKIM-signed mail delivered straight to the recipients' MX (found through a
 * real dnsmasq) or through SMTP_RELAY_URL to Postfix's smtp-sink; signatures checked by two
 * independent verifiers (mailauth, and Debian's python3-dkim) against the key dnsmasq publishes.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { eventually } from '@mailyard/testkit/eventually';
import {
  type DkimKeyPair,
  type EventRow,
  acceptSend,
  dkimKeyPair,
  eventsOf,
  insertDomainMailer,
  logsOf,
  newTenant,
  setDomainVerified,
} from '@mailyard/testkit/fixtures';
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type SmtpSink, startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

const DOMAIN = 'brand.test';
const SELECTOR = 'mailyard';

let stores: Stores;
let dns: Dnsmasq;
let key: DkimKeyPair;
let tenantId: string;

const TERMINAL = (e: EventRow) => e.event !== 'SMTP_ERROR' || e.payload.details.retry_scheduled === false;

async function settled(h: SendHarness, refId: string, recipients: number): Promise<EventRow[]> {
  return eventually(async () => {
    const events = await eventsOf(h.ctx.db, refId);
    return events.filter(TERMINAL).flatMap((e) => e.payload.details.email).length >= recipients
      ? events
      : null;
  }, `terminal events of ${refId}`);
}

/** mailauth's verifier, resolving TXT records through dnsmasq. */
async function verifyWithMailauth(raw: Buffer | string) {
  const resolver = new Resolver({ timeout: 1000, tries: 2 });
  resolver.setServers([dns.server]);
  const result = await dkimVerify(raw, {
    resolver: async (name: string, type: string) => {
      if (type !== 'TXT') throw Object.assign(new Error(`unexpected ${type} lookup`), { code: 'ENOTFOUND' });
      return resolver.resolveTxt(name);
    },
  });
  return result.results[0];
}

/** Debian's python3-dkim (dkimpy), its DNS lookups through dnsmasq. */
function verifyWithDkimpy(raw: Buffer | string): string {
  const script = `
import sys, dkim, dns.resolver
r = dns.resolver.Resolver(configure=False)
r.nameservers = ['127.0.0.1']
r.port = int(sys.argv[1])
def txt(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return b''.join(b''.join(rd.strings) for rd in r.resolve(name.rstrip('.'), 'TXT'))
ok = dkim.verify(sys.stdin.buffer.read(), dnsfunc=txt)
print('pass' if ok else 'fail')
`;
  try {
    return execFileSync('/usr/bin/python3', ['-c', script, String(dns.port)], { input: raw })
      .toString()
      .trim();
  } catch (err) {
    return `fail: ${(err as { stdout?: Buffer }).stdout?.toString() ?? ''}${(err as Error).message}`;
  }
}

const message = (mailerId: string, to: string[]) => ({
  from: { email: `news@${DOMAIN}`, name: 'Brand News' },
  to: to.map((email) => ({ email })),
  mailer_id: mailerId,
  subject: 'Spring sale',
  content: [
    {
      type: 'text/html' as const,
      value: '<p>Everything <b>20%</b> off at <a href="https://brand.test/sale">brand.test</a></p>',
    },
    { type: 'text/plain' as const, value: 'Everything 20% off at https://brand.test/sale' },
  ],
  attachments: [{ filename: 'terms.txt', content: Buffer.from('terms and conditions').toString('base64') }],
});

beforeAll(async () => {
  stores = await createStores();
  key = dkimKeyPair();
  dns = await startDnsmasq({
    txt: [{ name: `${SELECTOR}._domainkey.${DOMAIN}`, value: key.txt }],
    mx: [
      { name: 'recipient.test', host: 'mx1.recipient.test', preference: 10 },
      // failover.test: the preferred MX refuses connections, the second one takes the mail
      { name: 'failover.test', host: 'dead.failover.test', preference: 5 },
      { name: 'failover.test', host: 'mx2.failover.test', preference: 20 },
    ],
    a: [
      { name: 'mx1.recipient.test', ip: '127.0.0.1' },
      { name: 'dead.failover.test', ip: '127.0.0.2' },
      { name: 'mx2.failover.test', ip: '127.0.0.1' },
      // implicit.test has no MX: its A record is its mail server (RFC 5321 5.1)
      { name: 'implicit.test', ip: '127.0.0.1' },
    ],
  });
});

afterAll(async () => {
  await dns?.stop();
  await stores?.drop();
});

describe('direct to MX', () => {
  let h: SendHarness;
  let mx: SmtpReceiver;
  let mailerId: string;

  beforeAll(async () => {
    mx = await startSmtpReceiver({ starttls: true });
    // The MX peers listen on loopback: the opt-out of the MX address policy (send-host-policy.test.ts refuses them).
    h = await startSendService(stores, {
      DNS_SERVERS: dns.server,
      MX_PORT: String(mx.port),
      MX_ALLOW_PRIVATE_HOSTS: '1',
    });
    tenantId = await newTenant(h.ctx.db);
    mailerId = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, {
      domain: DOMAIN,
      selector: SELECTOR,
      key,
    });
  });

  afterAll(async () => {
    await h?.close();
    await mx?.close();
  });

  it('delivers to each domain through its MX over STARTTLS, DKIM-signed', async () => {
    const { refId, copyIds } = await acceptSend(
      h.ctx.db,
      tenantId,
      message(mailerId, [
        'ann@recipient.test',
        'bob@implicit.test',
        'cid@failover.test',
        'dan@no-such-domain.test',
      ]),
    );
    const events = await settled(h, refId, 4);
    expect(
      events.map((e) => [e.event, e.payload.details.email.sort(), e.payload.details.failed_reason]),
    ).toEqual(
      expect.arrayContaining([
        ['MAIL_DELIVERED', ['ann@recipient.test', 'bob@implicit.test', 'cid@failover.test'], ''],
        ['SMTP_ERROR', ['dan@no-such-domain.test'], 'Recipient domain does not exist'],
      ]),
    );
    expect(events).toHaveLength(2);
    const messages = await mx.waitForMessages(3);
    expect(messages.map((m) => m.to).sort()).toEqual([
      ['ann@recipient.test'],
      ['bob@implicit.test'],
      ['cid@failover.test'],
    ]);
    for (const m of messages) {
      expect(m.secure).toBe(true);
      // The envelope sender is the recipient's VERP return path; the header From is untouched.
      expect(m.from).toMatch(
        new RegExp(`^bounce\\+${copyIds[0]!.replace('.', '\\.')}\\.[a-z2-7]{16}@mailyard\\.test$`),
      );
      const raw = m.raw.toString();
      expect(raw).toMatch(/^From: Brand News <news@brand\.test>\r?$/m);
      expect(raw).toContain(`Message-ID: <svc_mailer_${copyIds[0]}@mailyard.test>`);
      expect(raw).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=brand\.test;/);
      const dkim = await verifyWithMailauth(m.raw);
      expect(dkim?.status?.result).toBe('pass');
      expect(dkim?.signingDomain).toBe(DOMAIN);
      expect(dkim?.selector).toBe(SELECTOR);
      expect(verifyWithDkimpy(m.raw)).toBe('pass');
    }
    // a changed message no longer verifies (the verifiers really check)
    const tampered = messages[0]!.raw.toString().replace('Spring sale', 'Spring scam');
    expect((await verifyWithMailauth(tampered))?.status?.result).toBe('fail');
    expect(verifyWithDkimpy(tampered)).toMatch(/^fail/);
  });

  it('never sends unsigned: a key that cannot sign ends the copy with a final SMTP_ERROR', async () => {
    // An Ed25519 key parses but cannot make the rsa-sha256 signature nodemailer's signer writes.
    const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
    const unsignable = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, {
      domain: 'nosign.test',
      key: { privateKeyPem: ed25519.toString(), txt: key.txt },
    });
    const data = mx.dataCount();
    const connections = mx.tcpConnections();
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...message(unsignable, ['ann@recipient.test']),
      from: { email: 'news@nosign.test' },
    });
    const events = await settled(h, refId, 1);
    expect(
      events.map((e) => [e.event, e.payload.details.retry_scheduled, e.payload.details.failed_reason]),
    ).toEqual([
      ['SMTP_ERROR', false, 'Message could not be built: DKIM signing failed (the key could not sign)'],
    ]);
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({ status: 'FAILED', last_event: 'SMTP_ERROR' });
    expect(mx.dataCount()).toBe(data);
    expect(mx.tcpConnections()).toBe(connections);
  });

  it('refuses a copy whose domain is no longer verified', async () => {
    const other = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, { domain: 'lapsed.test', key });
    await setDomainVerified(h.ctx.db, other, false);
    const before = mx.dataCount();
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...message(other, ['ann@recipient.test']),
      from: { email: 'news@lapsed.test' },
    });
    const events = await settled(h, refId, 1);
    expect(
      events.map((e) => [
        e.event,
        e.payload.details.failed_reason,
        e.payload.details.attempt,
        e.payload.details.retry_scheduled,
      ]),
    ).toEqual([['SMTP_ERROR', 'Sending domain is not verified', 1, false]]);
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({ status: 'FAILED', failure_reason: 'Sending domain is not verified' });
    expect(mx.dataCount()).toBe(before);
  });
});

describe('through SMTP_RELAY_URL', () => {
  let h: SendHarness;
  let sink: SmtpSink;
  let mailerId: string;

  beforeAll(async () => {
    sink = await startSmtpSink({ dump: true });
    h = await startSendService(stores, { SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}` });
    tenantId = await newTenant(h.ctx.db);
    mailerId = await insertDomainMailer(h.ctx.db, h.ctx.sealer, tenantId, {
      domain: DOMAIN,
      selector: SELECTOR,
      key,
    });
  });

  afterAll(async () => {
    await h?.close();
    await sink?.stop();
  });

  it('hands each recipient of a copy to the relay with its own VERP return path (Postfix smtp-sink)', async () => {
    const { refId, copyIds } = await acceptSend(
      h.ctx.db,
      tenantId,
      message(mailerId, ['x@anywhere.test', 'y@elsewhere.test']),
    );
    const events = await settled(h, refId, 2);
    expect(events.map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    const dumped = await sink.waitForMessages(2);
    expect(dumped.map((d) => d.to).sort()).toEqual([['x@anywhere.test'], ['y@elsewhere.test']]);
    const senders = new Set<string>();
    for (const d of dumped) {
      expect(d.from).toMatch(
        new RegExp(`^bounce\\+${copyIds[0]!.replace('.', '\\.')}\\.[a-z2-7]{16}@mailyard\\.test$`),
      );
      senders.add(d.from);
      expect(d.message).toContain('Subject: Spring sale');
      expect(d.message).toMatch(/^From: Brand News <news@brand\.test>\r?$/m);
      expect((await verifyWithMailauth(d.message))?.status?.result).toBe('pass');
      expect(verifyWithDkimpy(d.message)).toBe('pass');
    }
    expect(senders.size).toBe(2);
  });
});
