/**
 * Bounces, complaints and mailto unsubscribes across services, on the real servers:
 * gateway API -> send service (VERP return path per recipient) -> a private Postfix relay
 * (libs/testkit peers/postfix-relay) -> a receiving SMTP server that refuses one address. Postfix
 * then returns its own RFC 3464 DSN to the VERP address, routed to the inbound service (MX of the
 * bounce domain) -> MAIL_BOUNCE recorded, posted to the tenant's EMAIL_EVENT webhook by the
 * dispatcher, address suppressed (the next send to it is MAIL_GENERATION_REJECTION) only when the
 * bounce category is invalid_recipient (a mailbox-full or a blocklist DSN is not). An ARF
 * complaint (fixture, with the real return path) -> MAIL_SPAM and suppression. The
 * List-Unsubscribe mailto of a tracked send, mailed with swaks -> MAIL_UNSUBSCRIBED and
 * suppression. Forged service addresses are refused at RCPT.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EmailEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import { start as startInbound } from '@mailyard/inbound-smtp';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  metricsRegistry,
  openContext,
} from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { parseMessage } from '@mailyard/testkit/mime';
import { type PostfixRelay, startPostfixRelay } from '@mailyard/testkit/peers/postfix-relay';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';

jest.setTimeout(180_000);
const run = promisify(execFile);

const BOUNCE_DOMAIN = 'bounces.mailyard.test';
const FIXTURES = join(__dirname, '..', 'services', 'inbound-smtp', 'src', 'fixtures');
const PLACEHOLDER = 'bounce+01JB8W7Y3K5Q9M2N4P6R8T0V1X.1.k3v7q2m5x9z4w6ya@bounces.mailyard.test';
const GONE = 'gone@recipient.example';
const REFUSAL =
  '550 5.1.1 <gone@recipient.example>: Recipient address rejected: User unknown in virtual mailbox table';
const FULL = 'full@recipient.example';
const FULL_REFUSAL = '552 5.2.2 <full@recipient.example>: Recipient address rejected: Mailbox full';
const LISTED = 'listed@recipient.example';
const LISTED_REFUSAL =
  '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.10';
/** What the receiving server refuses (the relay then returns its DSN to the VERP address). */
const REFUSALS: Record<string, string> = { [GONE]: REFUSAL, [FULL]: FULL_REFUSAL, [LISTED]: LISTED_REFUSAL };

let stores: Stores;
let mx: SmtpReceiver;
let relay: PostfixRelay;
let hooks: WebhookReceiver;
let ctx: ServiceContext;
let services: RunningService[] = [];
let app: ReturnType<typeof buildGatewayApp>;
let inboundPort = 0;
let auth: Record<string, string>;
let mailerId = '';

beforeAll(async () => {
  stores = await createStores();
  hooks = await startWebhookReceiver();
  mx = await startSmtpReceiver({
    onRcpt: (address) => {
      const refusal = REFUSALS[address];
      return refusal ? [Number(refusal.slice(0, 3)), refusal.slice(4)] : undefined;
    },
  });
  inboundPort = await freePort();
  relay = await startPostfixRelay({ defaultPort: mx.port, transports: { [BOUNCE_DOMAIN]: inboundPort } });
  const env = {
    ...stores.env,
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    API_KEY_CACHE_MS: '0',
    SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
    BOUNCE_DOMAIN,
    SMTP_PORT: String(inboundPort),
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_POLL_MS: '100',
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '200',
  };
  ctx = await openContext(configFrom(env), createLogger('bounces-test', 'error'));
  services = [await startSend(ctx), await startDispatcher(ctx), await startInbound(ctx)];
  app = buildGatewayApp(ctx);
  const tenant = await createTenant(ctx.db, { name: 'bounces', tier: 'enterprise' });
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
  mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenant.id, {
    domain: 'brand.test',
    key: dkimKeyPair(),
  });
  await request(app)
    .post('/v1/webhook/register')
    .set(auth)
    .send({
      webhook_url: hooks.url('/events'),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: {
        events: { delivery: true, bounce: true, spam: true, unsubscribe: true, generation_rejection: true },
      },
    })
    .expect(201);
});

afterAll(async () => {
  for (const s of services.reverse()) await s.stop();
  if (ctx) await closeContext(ctx);
  await relay?.stop();
  await mx?.close();
  await hooks?.close();
  await stores?.drop();
});

async function send(to: string, tracked = false): Promise<string> {
  const res = await request(app)
    .post('/v1/email/send')
    .set(auth)
    .send({
      from: { email: 'news@brand.test', name: 'Brand News' },
      to: [{ email: to }],
      subject: 'Spring sale',
      content: [
        { type: 'text/html', value: '<p>Everything is <a href="https://brand.test/sale">20% off</a></p>' },
      ],
      mailer_id: mailerId,
      custom_args: { campaign: 'spring' },
      ...(tracked ? { settings: { open_tracking: { enable: true } } } : {}),
    })
    .expect(200);
  return res.body.ref_id as string;
}

/** Webhook events posted so far for `refId` (EMAIL_EVENT bodies are arrays), a retried delivery once. */
const posted = (refId: string) =>
  hooks
    .deliveries('/events')
    .flatMap((r) => r.json as EmailEvent[])
    .filter((e) => e.details.ref_id === refId);

const waitFor = (refId: string, event: string) =>
  eventually(() => posted(refId).find((e) => e.event === event), `${event} webhook for ${refId}`, 60_000);

/** The suppression of `email` as GET /v1/suppressions/{email} answers it: reason and the send that caused it. */
const suppression = async (email: string) =>
  (
    await request(app)
      .get(`/v1/suppressions/${encodeURIComponent(email)}`)
      .set(auth)
      .expect(200)
  ).body.data as {
    reason: string;
    ref_id: string | null;
  };

async function swaks(args: string[]): Promise<string> {
  try {
    const r = await run('swaks', [
      '--server',
      '127.0.0.1',
      '--port',
      String(inboundPort),
      '--timeout',
      '30',
      ...args,
    ]);
    return r.stdout + r.stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

it('a refused recipient: Postfix DSN to the VERP address -> MAIL_BOUNCE webhook, suppression, next send rejected', async () => {
  const refId = await send(GONE);
  const bounce = await waitFor(refId, 'MAIL_BOUNCE');
  expect(bounce).toMatchObject({
    event: 'MAIL_BOUNCE',
    success: false,
    details: {
      ref_id: refId,
      mailer_id: mailerId,
      email: [GONE],
      custom_args: { campaign: 'spring' },
      message_id: expect.stringMatching(/^<svc_mailer_/),
      failed_reason: `Hard bounce: ${REFUSAL}`,
      bounce_category: 'invalid_recipient',
    },
  });
  // The relay took the message (delivered to the next hop), the DSN came later: both are reported.
  expect(posted(refId).map((e) => e.event)).toEqual(['MAIL_DELIVERED', 'MAIL_BOUNCE']);
  expect(relay.log()).toMatch(/status=bounced \(host 127\.0\.0\.1\[127\.0\.0\.1\] said: 550 5\.1\.1/);
  expect(await suppression(GONE)).toMatchObject({ reason: 'hard_bounce', ref_id: refId });
  const log = (await request(app).get('/v1/email/logs').query({ refId }).set(auth).expect(200)).body.data[0];
  expect(log).toMatchObject({ status: 'MAIL_BOUNCE', failure_reason: `Hard bounce: ${REFUSAL}` });

  const again = await send(GONE);
  expect(await waitFor(again, 'MAIL_GENERATION_REJECTION')).toMatchObject({
    details: { email: [GONE], failed_reason: 'recipient unsubscribed' },
  });
});

it('a mailbox-full DSN and a 5.7.1 blocklist DSN: mailbox_full and reputation bounces, the addresses stay sendable', async () => {
  for (const [address, refusal, category, label] of [
    [FULL, FULL_REFUSAL, 'mailbox_full', 'Soft bounce'],
    [LISTED, LISTED_REFUSAL, 'reputation', 'Blocked'],
  ] as const) {
    const refId = await send(address);
    const bounce = await waitFor(refId, 'MAIL_BOUNCE');
    expect(bounce).toMatchObject({
      details: {
        email: [address],
        failed_reason: `${label}: ${refusal}`,
        bounce_category: category,
      },
    });
    // Not suppressed: the next send to the address is attempted (and refused again by the server).
    expect(
      (
        await request(app)
          .get(`/v1/suppressions/${encodeURIComponent(address)}`)
          .set(auth)
      ).status,
    ).toBe(404);
    const again = await send(address);
    await waitFor(again, 'MAIL_BOUNCE');
    expect(posted(again).map((e) => e.event)).not.toContain('MAIL_GENERATION_REJECTION');
  }
});

it('an ARF complaint carrying the return path -> MAIL_SPAM webhook and suppression; a forged one changes nothing', async () => {
  const reader = 'reader@recipient.example';
  const refId = await send(reader);
  await waitFor(refId, 'MAIL_DELIVERED');
  const received = await eventually(
    () => mx.messages.find((m) => m.to.includes(reader)),
    'message at the MX',
  );
  expect(received.from).toMatch(/^bounce\+[0-9A-Z]{26}\.1\.[a-z2-7]{16}@bounces\.mailyard\.test$/);
  const arf = readFileSync(join(FIXTURES, 'arf-redacted.eml'), 'utf8').replaceAll(PLACEHOLDER, received.from);

  // At the (valid) return path: an auto-reply and broken MIME are accepted, processed and dropped.
  for (const [name, body] of <Array<[string, string]>>[
    [
      'auto-reply',
      readFileSync(join(FIXTURES, 'autoreply-rfc3834.eml'), 'utf8').replaceAll(PLACEHOLDER, received.from),
    ],
    [
      'broken',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="x"\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@\r\n',
    ],
  ])
    expect(`${name}: ${await swaksData(received.from, body)}`).toMatch(/<- {2}250 /);
  await allProcessed();
  expect(posted(refId).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
  const metrics = await metricsRegistry.getSingleMetricAsString('mailyard_inbound_service_mail_total');
  expect(metrics).toMatch(/kind="auto_reply",outcome="ignored"\} [1-9]/);

  // A report whose return path was tampered with names no send: dropped.
  const forged = arf.replaceAll(
    received.from,
    received.from.replace(/\.([a-z2-7])/, (_, c) => `.${c === 'a' ? 'b' : 'a'}`),
  );
  const forgedOut = await swaksData(`fbl@${BOUNCE_DOMAIN}`, forged);
  expect(forgedOut).toMatch(/<- {2}250 /);

  const out = await swaksData(`fbl@${BOUNCE_DOMAIN}`, arf);
  expect(out).toMatch(/<- {2}250 /);
  const spam = await waitFor(refId, 'MAIL_SPAM');
  expect(spam).toMatchObject({
    success: false,
    details: {
      email: [reader],
      failed_reason: 'Spam complaint (abuse) reported by Yahoo!-Mail-Feedback/2.0',
    },
  });
  expect(await suppression(reader)).toMatchObject({ reason: 'spam_complaint', ref_id: refId });
  await allProcessed();
  expect(posted(refId).filter((e) => e.event === 'MAIL_SPAM')).toHaveLength(1);
});

it('the List-Unsubscribe mailto of a tracked send -> MAIL_UNSUBSCRIBED and suppression; forged addresses get 550', async () => {
  const reader = 'carl@recipient.example';
  const refId = await send(reader, true);
  const received = await eventually(() => mx.messages.find((m) => m.to.includes(reader)), 'tracked message');
  const header = parseMessage(received.raw).headers['list-unsubscribe']!;
  const mailto = /<mailto:([^?>]+)\?subject=unsubscribe>/.exec(header)?.[1];
  expect(mailto).toMatch(/^unsubscribe\+[0-9A-Z]{26}\.[a-z2-7]{16}@bounces\.mailyard\.test$/);

  const forged = mailto!.replace(/\.([a-z2-7])/, (_, c) => `.${c === 'a' ? 'b' : 'a'}`);
  expect(await swaks(['--to', forged, '--from', reader, '--quit-after', 'RCPT'])).toMatch(
    /<\*\* 550 5\.1\.1 .*no such mailbox/,
  );
  expect(
    await swaks(['--to', `bounce+nothing@${BOUNCE_DOMAIN}`, '--from', '<>', '--quit-after', 'RCPT']),
  ).toMatch(/<\*\* 550 5\.1\.1 /);
  expect(
    await swaks(['--to', `postmaster@${BOUNCE_DOMAIN}`, '--from', '<>', '--quit-after', 'RCPT']),
  ).toMatch(/<\*\* 550 5\.1\.1 /);

  const unsubscribeMail = () =>
    swaks(['--to', mailto!, '--from', reader, '--header', 'Subject: unsubscribe', '--body', 'unsubscribe']);
  const out = await unsubscribeMail();
  expect(out).toMatch(/<- {2}250 /);
  const unsub = await waitFor(refId, 'MAIL_UNSUBSCRIBED');
  expect(unsub).toMatchObject({
    success: true,
    details: { email: [reader], failed_reason: '', tracking: { ip: '127.0.0.1', time: expect.any(String) } },
  });
  expect(await suppression(reader)).toMatchObject({ reason: 'unsubscribe', ref_id: refId });
  // A second mail to the same address suppresses nothing new and records nothing.
  await unsubscribeMail();
  await allProcessed();
  expect(posted(refId).filter((e) => e.event === 'MAIL_UNSUBSCRIBED')).toHaveLength(1);
});

/** Every message the inbound service answered 250 for has been processed (stored before the 250). */
async function allProcessed(): Promise<void> {
  await eventually(async () => {
    const { rows } = await ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM inbound_messages WHERE status = 'stored'",
    );
    return rows[0]!.n === 0;
  }, 'inbound messages processed');
}

/** swaks with the message given on stdin (a whole message, headers included). */
function swaksData(to: string, message: string): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(
      'swaks',
      [
        '--server',
        '127.0.0.1',
        '--port',
        String(inboundPort),
        '--timeout',
        '30',
        '--from',
        '<>',
        '--to',
        to,
        '--data',
        '-',
      ],
      (_err, stdout, stderr) => resolve(`${stdout}${stderr}`),
    );
    child.stdin?.end(message);
  });
}
