/**
 * The MX service on the real servers with real SMTP clients (swaks): each acceptance rule,
 * STARTTLS, oversize, many recipients (each gets its own INCOMING_EMAIL), and the payload
 * posted through the webhook dispatcher to a real HTTP receiver (WEBHOOK_ALLOW_INSECURE=1).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { start } from '@mailyard/inbound-smtp';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type SharedStores, createSharedStores as createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

jest.setTimeout(120_000);
const run = promisify(execFile);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let services: RunningService[] = [];
let smtpPort = 0;
const DOMAIN = 'in.example.com';
const WILD = 'wild.example.com';

beforeAll(async () => {
  stores = await createStores('servers');
  receiver = await startWebhookReceiver();
  smtpPort = await freePort();
  const env = {
    ...stores.env,
    LOG_LEVEL: 'error',
    SMTP_PORT: String(smtpPort),
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_POLL_MS: '100',
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '200',
    INBOUND_MAX_MESSAGE_BYTES: '20000',
  };
  ctx = await openContext(configFrom(env), createLogger('inbound-test', 'error'));
  const t = await createTenant(ctx.db, { name: 'inbound', tier: 'enterprise' });
  for (const [name, wildcard] of [
    [DOMAIN, false],
    [WILD, true],
  ] as const) {
    await ctx.db.query(
      `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, created_at, updated_at)
       VALUES ($1, $2, 'domain', 'domain', $3, '', now(), now())`,
      [`domain_${name}`, t.id, name],
    );
    await ctx.db.query(
      `INSERT INTO domains (id, tenant_id, name, unicode_name, selector, dkim_public_key, dkim_private_key, verified,
         records, ips, created_at, updated_at)
       VALUES ($1, $2, $3, $3, 's', 'k', '\\x00', true, '[]'::jsonb, '[]'::jsonb, now(), now())`,
      [`domain_${name}`, t.id, name],
    );
    await ctx.db.query(
      `INSERT INTO inbound_domains (tenant_id, domain, url, method, wildcard) VALUES ($1, $2, $3, 'POST', $4)`,
      [t.id, name, receiver.url(`/hook/${name}`), wildcard],
    );
  }
  for (const [user, active, strict] of [
    ['support', true, false],
    ['sales', true, false],
    ['off', false, false],
    ['strict', true, true],
  ] as const)
    await ctx.db.query(
      'INSERT INTO inbound_addresses (tenant_id, domain, username, active, strict_replies) VALUES ($1, $2, $3, $4, $5)',
      [t.id, DOMAIN, user, active, strict],
    );
  services = [await startDispatcher(ctx), await start(ctx, env)];
});

afterAll(async () => {
  for (const s of services.reverse()) await s.stop();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
});

/** Runs swaks; resolves with its transcript whether the server accepted or not. */
async function swaks(args: string[]): Promise<string> {
  try {
    const r = await run('swaks', [
      '--server',
      '127.0.0.1',
      '--port',
      String(smtpPort),
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

const posted = (domain: string) =>
  receiver.to(`/hook/${domain}`).map((r) => r.json as { details: Record<string, unknown> });

describe('RCPT TO acceptance rules', () => {
  test('unknown domain: 550 at RCPT (no relaying)', async () => {
    const out = await swaks([
      '--to',
      'x@elsewhere.example.org',
      '--from',
      'a@example.org',
      '--quit-after',
      'RCPT',
    ]);
    expect(out).toMatch(/<\*\* 550 5\.1\.2 .*relay denied/);
  });
  test('rule 2: unknown username 550', async () => {
    const out = await swaks(['--to', `nobody@${DOMAIN}`, '--from', 'a@example.org', '--quit-after', 'RCPT']);
    expect(out).toMatch(/<\*\* 550 5\.1\.1 .*no such mailbox/);
  });
  test('rule 3: inactive username 550', async () => {
    const out = await swaks(['--to', `off@${DOMAIN}`, '--from', 'a@example.org', '--quit-after', 'RCPT']);
    expect(out).toMatch(/<\*\* 550 5\.2\.1 /);
  });
  test('rule 1: wildcard domain accepts any address and posts it', async () => {
    const out = await swaks([
      '--to',
      `anyone@${WILD}`,
      '--from',
      'a@example.org',
      '--header',
      'Subject: wild',
    ]);
    expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
    const [event] = await eventually(() => (posted(WILD).length > 0 ? posted(WILD) : null), 'wildcard post');
    expect(event).toMatchObject({
      event: 'INCOMING_EMAIL',
      success: true,
      details: { recipient: `anyone@${WILD}`, subject: 'wild', 'mailer-service': 'smtp', 'webhook-id': WILD },
    });
  });
  test('rule 4: strict_replies without our In-Reply-To is refused after DATA', async () => {
    const out = await swaks([
      '--to',
      `strict@${DOMAIN}`,
      '--from',
      'a@example.org',
      '--header',
      'In-Reply-To: <x@y>',
    ]);
    expect(out).toMatch(/<\*\* 550 5\.7\.1 /);
  });
  test('rule 5: strict_replies with a reply to our message is accepted', async () => {
    const out = await swaks([
      '--to',
      `strict@${DOMAIN}`,
      '--from',
      'a@example.org',
      '--header',
      'In-Reply-To: <svc_mailer_01ABC@mailyard.test>',
      '--header',
      'Subject: strict ok',
    ]);
    expect(out).toMatch(/<- {2}250 /);
    await eventually(
      () => posted(DOMAIN).find((e) => e.details.subject === 'strict ok'),
      'strict reply post',
    );
  });
});

test('STARTTLS is offered and works; AUTH is not offered', async () => {
  const out = await swaks([
    '--to',
    `support@${DOMAIN}`,
    '--from',
    'a@example.org',
    '--tls',
    '--header',
    'Subject: over tls',
  ]);
  expect(out).toMatch(/STARTTLS/);
  expect(out).toMatch(/TLS started/);
  expect(out).not.toMatch(/250-AUTH/);
  expect(out).toMatch(/<~ {2}250 /);
  await eventually(() => posted(DOMAIN).find((e) => e.details.subject === 'over tls'), 'tls post');
});

test('SIZE is announced and an oversize message gets 552', async () => {
  const out = await swaks([
    '--to',
    `support@${DOMAIN}`,
    '--from',
    'a@example.org',
    '--body',
    'x'.repeat(30_000),
  ]);
  expect(out).toMatch(/250[ -]SIZE 20000/);
  expect(out).toMatch(/<\*\* 552 /);
});

test('many recipients: each gets its own event; a MIME fixture arrives field by field', async () => {
  const raw = readFileSync(join(__dirname, '../libs/platform/src/mail/fixtures/attachments.eml'));
  const dataFile = join(mkdtempSync(join(tmpdir(), 'inbound-')), 'attachments.eml');
  writeFileSync(dataFile, raw);
  const out = await swaks([
    '--to',
    `support@${DOMAIN},sales@${DOMAIN},Someone@${WILD}`,
    '--from',
    'billing@example.org',
    '--data',
    `@${dataFile}`,
  ]);
  expect(out).toMatch(/<- {2}250 /);
  const events = await eventually(() => {
    const all = [...posted(DOMAIN), ...posted(WILD)].filter((e) => e.details.subject === 'Invoice');
    return all.length >= 3 ? all : null;
  }, 'three invoice posts');
  expect(events.map((e) => e.details.recipient).sort()).toEqual([
    `sales@${DOMAIN}`,
    `someone@${WILD}`,
    `support@${DOMAIN}`,
  ]);
  const one = events[0]!.details as Record<string, unknown> & {
    files: Array<Record<string, unknown>>;
    headers: Record<string, string[]>;
  };
  expect(one['user-agent']).toBe('BillingBot 2.1');
  expect(one['mailer-id']).toMatch(/^domain_/);
  expect(one.files.map((f) => f.filename)).toEqual(['invoice.pdf', 'notes.txt']);
});
