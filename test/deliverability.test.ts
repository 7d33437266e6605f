/**
 * Issue 29's "done when", as a new user meets it, on the real servers: gateway API -> send service
 * -> a relay that answers `550 5.1.1` for one address (SMTP_RELAY_URL, a real SMTP server) and
 * the MX (inbound service) receiving a gzip DMARC aggregate report at `dmarc@<SERVICE_DOMAIN>`
 * and a TLS-RPT report at `tls-rpt@<SERVICE_DOMAIN>` over SMTP (swaks); the webhook dispatcher
 * posting to the tenant's EMAIL_EVENT webhook. Small reputation settings (window 20, volume 10).
 *
 * 1. Ten good sends are delivered; the eleventh, to a dead address, gets the relay's 550 5.1.1:
 *    SMTP_ERROR with `bounce_category: invalid_recipient`, the address suppressed (hard_bounce),
 *    and 1 of 11 (9.1%) is over PAUSE_BOUNCE_RATE: the domain pauses, SENDING_PAUSED reaches the
 *    webhook as a one-element array, the next send answers 422 with the rate; reputation shows
 *    it; resume lets the domain send again.
 * 2. The DMARC report shows its messages, aligned passes and sources for the domain; the TLS
 *    report its session counts and failure types, on the day it started.
 * (DSN categories through a real Postfix relay: test/bounces.test.ts.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { EmailEvent } from '@mailyard/contracts';
import { start as startInbound } from '@mailyard/inbound-smtp';
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';
import { type OnContext, TEST_SETTINGS, startOnContext } from './support/send-stack';

jest.setTimeout(180_000);
const run = promisify(execFile);

const SERVICE_DOMAIN = 'mailyard.test';
const DOMAIN = 'brand.test';
const DEAD = 'nobody@recipient.example';
const REFUSAL = '550 5.1.1 <nobody@recipient.example>: Recipient address rejected: User unknown';

let stores: Stores;
let relay: SmtpReceiver;
let hooks: WebhookReceiver;
let stack: OnContext;
let app: OnContext['app'];
let inboundPort = 0;
let auth: Record<string, string>;
let mailerId = '';
const dir = mkdtempSync(join(tmpdir(), 'deliverability-'));

beforeAll(async () => {
  stores = await createStores();
  hooks = await startWebhookReceiver();
  relay = await startSmtpReceiver({
    onRcpt: (address) => (address === DEAD ? [550, REFUSAL.slice(4)] : undefined),
  });
  inboundPort = await freePort();
  const env = {
    ...stores.env,
    ...TEST_SETTINGS,
    SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
    SERVICE_DOMAIN,
    SMTP_PORT: String(inboundPort),
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_POLL_MS: '100',
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '200',
    REPUTATION_WINDOW: '20',
    PAUSE_MIN_VOLUME: '10',
    PAUSE_BOUNCE_RATE: '0.05',
  };
  stack = await startOnContext('deliverability-test', env, [startSend, startDispatcher, startInbound]);
  app = stack.app;
  const { db, sealer } = stack.ctx;
  const tenant = await createTenant(db, { name: 'deliverability', tier: 'enterprise' });
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
  mailerId = await insertDomainMailer(db, sealer, tenant.id, { domain: DOMAIN, key: dkimKeyPair() });
  await request(app)
    .post('/v1/webhook/register')
    .set(auth)
    .send({
      webhook_url: hooks.url('/events'),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: { events: { delivery: true, smtp_error: true } },
    })
    .expect(201);
});

afterAll(async () => {
  await stack?.stop();
  await relay?.close();
  await hooks?.close();
  await stores?.drop();
});

const message = (to: string) => ({
  from: { email: `news@${DOMAIN}` },
  to: [{ email: to }],
  subject: 'Autumn news',
  content: [{ type: 'text/plain', value: 'Hello' }],
  mailer_id: mailerId,
});

async function send(to: string): Promise<string> {
  const res = await request(app).post('/v1/email/send').set(auth).send(message(to)).expect(200);
  return res.body.ref_id as string;
}

/** Every object posted to the EMAIL_EVENT webhook so far (bodies are arrays). */
const posted = () => hooks.deliveries('/events').flatMap((r) => r.json as Array<{ event: string }>);

const eventOf = (refId: string, event: string) =>
  eventually(
    () => (posted() as EmailEvent[]).find((e) => e.event === event && e.details?.ref_id === refId) ?? null,
    `${event} for ${refId}`,
    60_000,
  );

async function swaks(to: string, file: string): Promise<string> {
  const args = ['--server', '127.0.0.1', '--port', String(inboundPort), '--timeout', '30'];
  const r = await run('swaks', [
    ...args,
    '--to',
    to,
    '--from',
    'noreply@reporter.example',
    '--data',
    `@${file}`,
  ]);
  return r.stdout + r.stderr;
}

/** A report mail: a text part and the report as a base64 attachment. */
function reportMail(subject: string, type: string, name: string, bytes: Buffer): string {
  const b = 'b_report_boundary';
  return [
    'From: noreply@reporter.example',
    `Subject: ${subject}`,
    `Message-ID: <${name}@reporter.example>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=UTF-8',
    '',
    subject,
    `--${b}`,
    `Content-Type: ${type}; name="${name}"`,
    `Content-Disposition: attachment; filename="${name}"`,
    'Content-Transfer-Encoding: base64',
    '',
    bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
    `--${b}--`,
    '',
  ].join('\r\n');
}

const day = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe('an address that does not exist pauses the domain; resume lets it send again', () => {
  it('550 5.1.1 at send: invalid_recipient, suppressed, SENDING_PAUSED, 422 with the rate, resume', async () => {
    const good = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(`reader${i}@recipient.example`)),
    );
    for (const refId of good) await eventOf(refId, 'MAIL_DELIVERED');

    const dead = await send(DEAD);
    const error = await eventOf(dead, 'SMTP_ERROR');
    expect(error.details).toMatchObject({ retry_scheduled: false, bounce_category: 'invalid_recipient' });
    const suppressed = await request(app)
      .get(`/v1/suppressions/${encodeURIComponent(DEAD)}`)
      .set(auth);
    expect(suppressed.status).toBe(200);
    expect(suppressed.body.data).toMatchObject({ reason: 'hard_bounce', ref_id: dead });

    const paused = await eventually(
      () =>
        hooks
          .deliveries('/events')
          .find((r) => (r.json as Array<{ event: string }>)[0]?.event === 'SENDING_PAUSED'),
      'SENDING_PAUSED webhook',
      60_000,
    );
    expect(paused.json).toEqual([
      {
        event: 'SENDING_PAUSED',
        success: false,
        details: expect.objectContaining({
          scope: 'domain',
          domain: DOMAIN,
          metric: 'invalid_recipient_bounce_rate',
          rate: 1 / 11,
          window: 11,
          threshold: 0.05,
        }),
      },
    ]);

    const refused = await request(app)
      .post('/v1/email/send')
      .set(auth)
      .send(message('later@recipient.example'));
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe(
      `Sending is paused for ${DOMAIN}: 9.1% invalid-recipient bounces over the last 11 emails`,
    );

    const reputation = await request(app).get(`/v1/domain/${DOMAIN}/reputation`).set(auth).expect(200);
    expect(reputation.body.data).toMatchObject({
      domain: DOMAIN,
      sent: 11,
      invalid_recipient_bounces: 1,
      paused: expect.objectContaining({ scope: 'domain' }),
    });

    await request(app).post(`/v1/domain/${DOMAIN}/resume`).set(auth).expect(200);
    const after = await send('later@recipient.example');
    await eventOf(after, 'MAIL_DELIVERED');
    const resumed = await request(app).get(`/v1/domain/${DOMAIN}/reputation`).set(auth).expect(200);
    expect(resumed.body.data.paused).toBeNull();
  });
});

describe('DMARC and TLS reports mailed to the service domain are summed per domain', () => {
  it('a gzip DMARC aggregate report: messages, aligned passes and sources', async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata>
    <org_name>google.com</org_name>
    <email>noreply-dmarc-support@google.com</email>
    <report_id>deliverability-test-1</report_id>
    <date_range><begin>${day('2026-11-20T00:00:00Z')}</begin><end>${day('2026-11-20T23:59:59Z')}</end></date_range>
  </report_metadata>
  <policy_published><domain>${DOMAIN}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>
  <record>
    <row><source_ip>192.0.2.10</source_ip><count>40</count>
      <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
    <identifiers><header_from>${DOMAIN}</header_from></identifiers>
    <auth_results><dkim><domain>${DOMAIN}</domain><selector>s1</selector><result>pass</result></dkim>
      <spf><domain>${DOMAIN}</domain><result>pass</result></spf></auth_results>
  </record>
  <record>
    <row><source_ip>198.51.100.7</source_ip><count>5</count>
      <policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>pass</spf></policy_evaluated></row>
    <identifiers><header_from>${DOMAIN}</header_from></identifiers>
    <auth_results><spf><domain>${DOMAIN}</domain><result>pass</result></spf></auth_results>
  </record>
  <record>
    <row><source_ip>203.0.113.99</source_ip><count>3</count>
      <policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>
    <identifiers><header_from>${DOMAIN}</header_from></identifiers>
    <auth_results><spf><domain>spoofer.example</domain><result>fail</result></spf></auth_results>
  </record>
</feedback>`;
    const file = join(dir, 'dmarc.eml');
    const name = `google.com!${DOMAIN}!1763596800!1763683199.xml.gz`;
    writeFileSync(file, reportMail(`Report domain: ${DOMAIN}`, 'application/gzip', name, gzipSync(xml)));
    expect(await swaks(`dmarc@${SERVICE_DOMAIN}`, file)).toMatch(/<- {2}250 /);

    const summary = await eventually(
      async () => {
        const res = await request(app)
          .get(`/v1/domain/${DOMAIN}/dmarc?startDate=2026-11-20&endDate=2026-11-20`)
          .set(auth)
          .expect(200);
        return res.body.data.reports === 1 ? res.body.data : null;
      },
      'the DMARC report summed',
      60_000,
    );
    expect(summary).toEqual({
      reports: 1,
      messages: 48,
      dmarc_pass: 45,
      dkim_aligned_pass: 40,
      spf_aligned_pass: 45,
      sources: [
        {
          source_ip: '192.0.2.10',
          count: 40,
          disposition: 'none',
          dkim: 'pass',
          spf: 'pass',
          header_from: DOMAIN,
          reporter: 'google.com',
        },
        {
          source_ip: '198.51.100.7',
          count: 5,
          disposition: 'none',
          dkim: 'fail',
          spf: 'pass',
          header_from: DOMAIN,
          reporter: 'google.com',
        },
        {
          source_ip: '203.0.113.99',
          count: 3,
          disposition: 'none',
          dkim: 'fail',
          spf: 'fail',
          header_from: DOMAIN,
          reporter: 'google.com',
        },
      ],
    });
  });

  it('a TLS-RPT report: session counts and failure types on the day it started', async () => {
    const report = {
      'organization-name': 'Google Inc.',
      'date-range': { 'start-datetime': '2026-11-21T00:00:00Z', 'end-datetime': '2026-11-21T23:59:59Z' },
      'contact-info': 'smtp-tls-reporting@google.com',
      'report-id': '2026-11-21T00:00:00Z_brand.test',
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': ['version: STSv1', 'mode: enforce'],
            'policy-domain': DOMAIN,
            'mx-host': [`mx.${DOMAIN}`],
          },
          summary: { 'total-successful-session-count': 120, 'total-failure-session-count': 4 },
          'failure-details': [
            {
              'result-type': 'certificate-expired',
              'sending-mta-ip': '209.85.220.41',
              'receiving-mx-hostname': `mx.${DOMAIN}`,
              'failed-session-count': 3,
            },
            {
              'result-type': 'starttls-not-supported',
              'sending-mta-ip': '209.85.220.42',
              'receiving-mx-hostname': `mx.${DOMAIN}`,
              'failed-session-count': 1,
            },
          ],
        },
      ],
    };
    const file = join(dir, 'tlsrpt.eml');
    const name = `google.com!${DOMAIN}!1763683200!1763769599.json.gz`;
    writeFileSync(
      file,
      reportMail(
        `Report Domain: ${DOMAIN}`,
        'application/tlsrpt+gzip',
        name,
        gzipSync(JSON.stringify(report)),
      ),
    );
    expect(await swaks(`tls-rpt@${SERVICE_DOMAIN}`, file)).toMatch(/<- {2}250 /);

    const summary = await eventually(
      async () => {
        const res = await request(app)
          .get(`/v1/domain/${DOMAIN}/tls-reports?startDate=2026-11-21&endDate=2026-11-21`)
          .set(auth)
          .expect(200);
        return res.body.data.reports === 1 ? res.body.data : null;
      },
      'the TLS report summed',
      60_000,
    );
    expect(summary).toEqual({
      reports: 1,
      days: [
        {
          date: '2026-11-21',
          reports: 1,
          successful: 120,
          failed: 4,
          failure_types: { 'certificate-expired': 3, 'starttls-not-supported': 1 },
        },
      ],
    });
  });
});
