/**
 * @mailyard/client's inbound, history-backfill and admin methods against a real gateway on a
 * port: a sending domain verified against a real dnsmasq before inbound routing is configured;
 * an IMAP mailer verified against a real Dovecot, its backfill jobs started, refused while one
 * is active (the 409's jobId reaches the caller), aborted, and one run to the end by the real
 * imap-backfill worker; tenants and keys through MailyardAdmin, used and revoked.
 */
import type { DomainData } from '@mailyard/contracts';
import { start as startBackfillWorker } from '@mailyard/imap-backfill';
import { type DnsRecords, type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type Dovecot, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { eventually } from '@mailyard/testkit/webhooks';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  Mailyard,
  MailyardAdmin,
  NotFoundError,
  UnprocessableError,
} from '../src';
import { type Running, listen, stop } from './support/running-gateway';

jest.setTimeout(120_000);

const ADMIN_KEY = 'client-test-admin-key-0123456789';
const USER = 'owner@client-mailbox.test';
const PASS = 'Client-Backfill-1';

let run: Running | undefined;
let dns: Dnsmasq;
let dovecot: Dovecot;
let receiver: WebhookReceiver;
let client: Mailyard;

beforeAll(async () => {
  dns = await startDnsmasq({});
  receiver = await startWebhookReceiver();
  dovecot = await startDovecot({
    user: USER,
    pass: PASS,
    messages: [1, 2, 3].map((i) => ({
      raw: `From: a@peer.test\r\nTo: ${USER}\r\nSubject: old ${i}\r\nMessage-ID: <old-${i}@peer.test>\r\n\r\nbody ${i}\r\n`,
      date: new Date(Date.now() - i * 86_400_000),
    })),
  });
  run = await listen({
    ADMIN_API_KEY: ADMIN_KEY,
    DNS_SERVERS: dns.server,
    DNS_TIMEOUT_MS: '5000',
    SERVICE_DOMAIN: 'mailyard.test',
    IMAP_SYNC: '0',
    BACKFILL_POLL_MS: '100',
  });
  client = new Mailyard({ apiKey: (await run.gw.newTenant()).apiKey, basePath: run.url });
});
afterAll(async () => {
  await stop(run);
  await dovecot?.stop();
  await receiver?.close();
  await dns?.stop();
});

/** The records of an add response as dnsmasq serves them. */
const zoneOf = (data: DomainData): DnsRecords => ({
  txt: data.records.filter((r) => r.type === 'TXT').map((r) => ({ name: r.name, value: r.value })),
  mx: data.records
    .filter((r) => r.type === 'MX')
    .map((r) => ({ name: r.name, host: r.value, preference: r.priority })),
});

describe('client.inbound', () => {
  const domain = 'client-inbound.test';

  it('routes a verified domain: relayWebhook, get (headers masked), update, usernames create/list/update', async () => {
    const added = await client.domains.add({ domain });
    await expect(
      client.inbound.relayWebhook({ domain, url: receiver.url('/in'), method: 'POST' }),
    ).rejects.toBeInstanceOf(UnprocessableError); // not verified yet
    await dns.setRecords(zoneOf(added.data));
    expect((await client.domains.verify(domain)).data.verified).toBe(true);

    const relayed = await client.inbound.relayWebhook({
      domain,
      url: receiver.url('/in'),
      method: 'post',
      headers: { 'X-Token': 's3cret' },
    });
    expect(relayed).toEqual({ success: true, message: 'Incoming domain configured' });
    expect(await client.inbound.get(domain)).toEqual({
      domain,
      url: receiver.url('/in'),
      method: 'POST',
      headers: { 'X-Token': '********' },
      wildcard: false,
    });
    await expect(
      client.inbound.relayWebhook({ domain, url: receiver.url('/in'), method: 'POST' }),
    ).rejects.toBeInstanceOf(ConflictError);

    await client.inbound.update(domain, { wildcard: true, method: 'PUT' });
    expect(await client.inbound.get(domain)).toMatchObject({ method: 'PUT', wildcard: true });
    const empty = await client.inbound.update(domain, {}).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(BadRequestError);
    expect((empty as BadRequestError).error).toBe(
      'at least one of url, method, headers, wildcard must be given',
    );

    await client.inbound.usernames.create({ user_name: 'Support', domain });
    await expect(client.inbound.usernames.create({ user_name: 'support', domain })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await client.inbound.usernames.list(domain)).emails).toEqual([
      { username: 'support', active: true, strict_replies: false },
    ]);
    await client.inbound.usernames.update(`support@${domain}`, {
      domain,
      active: false,
      strict_replies: true,
    });
    expect((await client.inbound.usernames.list(domain)).emails).toEqual([
      { username: 'support', active: false, strict_replies: true },
    ]);
    await expect(
      client.inbound.usernames.update(`nobody@${domain}`, { domain, active: true }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("another account's domain reads as 404", async () => {
    const other = new Mailyard({ apiKey: (await run!.gw.newTenant()).apiKey, basePath: run!.url });
    await expect(other.inbound.get(domain)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.inbound.usernames.list(domain)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('client.backfill', () => {
  let mailerId: string;
  beforeAll(async () => {
    const created = await client.mailers.verifyImap({
      name: 'Mailbox',
      email: USER,
      config_type: 'imap',
      connection_type: 'basic',
      config: { host: dovecot.host, port: 993, username: USER, password: PASS, secure: 'SSL' },
      webhook: { url: receiver.url('/mailbox'), method: 'POST' },
    });
    mailerId = created.mailer_id;
  });

  it('start, a second start is a ConflictError naming the active job, status, abort, abort again', async () => {
    const { jobId } = await client.backfill.start(mailerId, { count: 2 });
    const second = await client.backfill.start(mailerId, { count: 1 }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(ConflictError);
    expect((second as ConflictError).envelope).toMatchObject({
      error: 'active history backfill already exists',
      jobId,
    });
    expect(await client.backfill.status(mailerId, jobId)).toMatchObject({
      success: true,
      jobId,
      status: 'pending',
      processed: 0,
      target: 2,
      endedAt: '',
    });
    expect(await client.backfill.abort(mailerId, jobId)).toEqual({
      success: true,
      jobId,
      status: 'cancelled',
    });
    await expect(client.backfill.abort(mailerId, jobId)).rejects.toBeInstanceOf(ConflictError);
    expect((await client.backfill.status(mailerId, jobId)).status).toBe('cancelled');
    await expect(client.backfill.status(mailerId, 'job_nope')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.backfill.start(mailerId, {})).rejects.toBeInstanceOf(BadRequestError);
  });

  it('a job run by the imap-backfill worker reaches done, read through status', async () => {
    const worker = await startBackfillWorker(run!.gw.ctx);
    try {
      const { jobId } = await client.backfill.start(mailerId, { count: 2 });
      const done = await eventually(async () => {
        const s = await client.backfill.status(mailerId, jobId);
        return s.status === 'done' || s.status === 'failed' ? s : null;
      }, `job ${jobId} to finish`);
      expect(done).toMatchObject({ status: 'done', processed: 2, target: 2, percent: 100 });
      expect(done.endedAt).not.toBe('');
    } finally {
      await worker.stop();
    }
  });
});

describe('MailyardAdmin', () => {
  it('creates a tenant and keys that work, revokes a key', async () => {
    const admin = new MailyardAdmin({ adminKey: ADMIN_KEY, basePath: run!.url });
    const tenant = await admin.tenants.create({ name: 'From the client', tier: 'enterprise' });
    expect(tenant).toMatchObject({
      success: true,
      tenant_id: expect.any(String),
      key_id: expect.any(String),
    });
    const first = new Mailyard({ apiKey: tenant.api_key, basePath: run!.url });
    expect((await first.templates.list()).success).toBe(true);

    const key = await admin.keys.create(tenant.tenant_id);
    expect(key.tenant_id).toBe(tenant.tenant_id);
    const second = new Mailyard({ apiKey: key.api_key, basePath: run!.url });
    expect((await second.templates.list()).success).toBe(true);

    expect(await admin.keys.revoke(key.key_id)).toEqual({ success: true, message: 'API key revoked' });
    await expect(second.templates.list()).rejects.toBeInstanceOf(AuthenticationError);
    expect((await first.templates.list()).success).toBe(true);
    await expect(admin.keys.revoke(key.key_id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(admin.keys.create('tenant_nope')).rejects.toBeInstanceOf(NotFoundError);
    const bad = await admin.tenants.create({ name: '' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).error).toBe('name is required');
  });

  it('a wrong admin key is an AuthenticationError; an API key is not an admin key', async () => {
    const wrong = new MailyardAdmin({ adminKey: 'not-the-admin-key-0000000', basePath: run!.url });
    await expect(wrong.tenants.create({ name: 'x' })).rejects.toBeInstanceOf(AuthenticationError);
    const tenantKey = (await run!.gw.newTenant()).apiKey;
    const posing = new MailyardAdmin({ adminKey: tenantKey, basePath: run!.url });
    await expect(posing.keys.create('tenant_x')).rejects.toBeInstanceOf(AuthenticationError);
  });
});
