/**
 * Shared set-up of the IMAP backfill and live sync tests (test/imap-*.test.ts): fresh stores, a
 * webhook receiver, the gateway app (supertest) with an enterprise tenant, and helpers that go
 * through the real API (mailers via /v1/imapbasic/verify, jobs via /v1/imap/{id}/history).
 * Services (dispatcher, imap-backfill worker) are started by each file as it needs them.
 */
import type { BackfillLifecycleEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import { type BackfillSettings, LiveSync, backfillSettings, mailboxOpener } from '@mailyard/imap-backfill';
import {
  type Config,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  metricsRegistry,
  openContext,
} from '@mailyard/platform';
import { createTenant, mailers } from '@mailyard/store';
import type { DovecotMessage } from '@mailyard/testkit/peers/dovecot';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { ImapFlow } from 'imapflow';
import request from 'supertest';

export const USER = 'owner@mailbox.test';
export const PASS = 'Backfill-Secret-1';
export const DAY = 86_400_000;
export const NOW_S = Math.floor(Date.now() / 1000) * 1000;
export const ago = (ms: number) => new Date(NOW_S - ms);
/** RFC 3339 whole seconds. */
export const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** A window-bound probe: T0 100 days ago (to the second), T1 ten seconds later. */
export const T0 = ago(100 * DAY);
export const T1 = new Date(T0.getTime() + 10_000);

/** The backfill settings the end-to-end tests share (fast polls, short leases, quick retries). */
export const BACKFILL_TEST_ENV = {
  BACKFILL_POLL_MS: '100',
  BACKFILL_SLICE_DAYS: '30',
  BACKFILL_LEASE_MS: '4000',
  BACKFILL_RETRY_BASE_MS: '200',
  BACKFILL_RETRY_MAX: '3',
};

export function mail(
  id: string,
  date: Date,
  folder: string,
  h: { from?: string; to?: string; cc?: string; extra?: string } = {},
): DovecotMessage {
  const raw = [
    `From: ${h.from ?? 'someone@else.test'}`,
    `To: ${h.to ?? USER}`,
    ...(h.cc ? [`Cc: ${h.cc}`] : []),
    ...(h.extra ? [h.extra] : []),
    `Subject: ${id}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <${id}@mailbox.test>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of ${id}`,
    '',
  ].join('\r\n');
  return { raw, date, folder };
}

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

export interface ImapHarness {
  stores: Stores;
  receiver: WebhookReceiver;
  config: Config;
  ctx: ServiceContext;
  app: ReturnType<typeof buildGatewayApp>;
  auth: { Authorization: string };
  /** The tenant's API key (the bearer in `auth`). */
  key: string;
  tenantId: string;
  /** Environment of a spawned service on the same stores. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** `serviceEnv` goes to process.env (read by the imap-backfill settings) and to spawned services. */
export async function startHarness(serviceEnv: Record<string, string>): Promise<ImapHarness> {
  Object.assign(process.env, serviceEnv);
  const stores = await createStores();
  const receiver = await startWebhookReceiver();
  const config = configFrom({
    ...stores.env,
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    API_KEY_CACHE_MS: '0',
    WEBHOOK_ALLOW_INSECURE: '1',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    WEBHOOK_BATCH_WAIT_MS: '10',
    BACKFILL_MAX_COUNT: '5',
  });
  const ctx = await openContext(config, createLogger('imap-test', 'error'));
  const tenant = await createTenant(ctx.db, { name: 'backfill', tier: 'enterprise' });
  return {
    stores,
    receiver,
    config,
    ctx,
    app: buildGatewayApp(ctx),
    auth: { Authorization: `Bearer ${tenant.apiKey}` },
    key: tenant.apiKey,
    tenantId: tenant.id,
    env: {
      ...stores.env,
      ...serviceEnv,
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      WEBHOOK_ALLOW_INSECURE: '1',
      OUTBOX_POLL_MS: '50',
      LOG_LEVEL: 'error',
    },
    async close() {
      await closeContext(ctx);
      await receiver.close();
      await stores.drop();
    },
  };
}

/** An IMAP mailer through the API (the gateway logs in to verify), its webhook at `path`. */
export async function createImapMailer(h: ImapHarness, path: string, host: string): Promise<string> {
  const res = await request(h.app)
    .post('/v1/imapbasic/verify')
    .set(h.auth)
    .send({
      name: 'Mailbox',
      email: USER,
      config_type: 'imap',
      connection_type: 'basic',
      config: { host, port: 993, username: USER, password: PASS, secure: 'SSL' },
      webhook: { url: h.receiver.url(path), method: 'POST', headers: { 'X-Hook-Secret': 's3cret' } },
    });
  expect(res.status).toBe(201);
  return res.body.mailer_id as string;
}

/**
 * A basic IMAP mailer row straight in the store, its webhook at `hookPath` (default `/<id>`),
 * for hosts the gateway's login check cannot or need not log in to.
 */
export async function insertImapMailer(
  h: ImapHarness,
  id: string,
  host: string,
  hookPath = `/${id}`,
): Promise<string> {
  await mailers.create(h.ctx.db, h.tenantId, {
    id,
    configType: 'basic_imap',
    connectionType: 'basic',
    name: id,
    email: USER,
    config: { host, port: 993, username: USER, secure: 'SSL' },
    sealedSecret: h.ctx.sealer.seal(PASS),
    webhook: {
      info: { url: h.receiver.url(hookPath), method: 'POST', headers_present: [] },
      sealedHeaders: null,
    },
  });
  return id;
}

/** A started live sync replica in this process (the real mailbox clients), re-reading the mailers every 200 ms. */
export function startLiveSync(h: ImapHarness, over: Partial<BackfillSettings> = {}): LiveSync {
  const settings = { ...backfillSettings(h.config), ...over };
  const sync = new LiveSync({
    db: h.ctx.db,
    kv: h.ctx.kv,
    bus: h.ctx.bus,
    logger: h.ctx.logger,
    settings,
    openMailbox: mailboxOpener(h.ctx.db, h.ctx.sealer, settings),
    scanMs: 200,
  });
  sync.start();
  return sync;
}

export const startJob = (h: ImapHarness, mailer: string, body: object, base: 'imap' | 'legacy' = 'imap') =>
  request(h.app)
    .post(base === 'imap' ? `/v1/imap/${mailer}/history` : `/v1/${mailer}/backfill`)
    .set(h.auth)
    .send(body);

export const status = (h: ImapHarness, mailer: string, job: string) =>
  request(h.app).get(`/v1/imap/${mailer}/history/${job}`).set(h.auth);

export const abortJob = (h: ImapHarness, mailer: string, job: string) =>
  request(h.app).post(`/v1/imap/${mailer}/history/${job}/abort`).set(h.auth);

/** The status once the job is done, failed or cancelled. */
export async function finished(h: ImapHarness, mailer: string, job: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const s = await status(h, mailer, job);
      return ['done', 'failed', 'cancelled'].includes(s.body.status) ? s.body : null;
    },
    `job ${job} to finish`,
    timeoutMs,
  );
}

/** INCOMING_EMAIL requests of backfill job `job` received so far. */
export function jobMessages(h: ImapHarness, job: string): Received[] {
  return h.receiver.requests.filter(
    (r) =>
      r.headers['x-history-backfill-job-id'] === job &&
      (r.json as { event?: string })?.event === 'INCOMING_EMAIL',
  );
}

const detailsOf = (r: Received) => (r.json as { details: Record<string, unknown> }).details;

/** Waits until `n` INCOMING_EMAIL of `job` arrived; their subjects and labels. */
export async function delivered(
  h: ImapHarness,
  job: string,
  n: number,
  timeoutMs?: number,
): Promise<Array<{ subject: string; labels: string[]; messageId: string }>> {
  const got = await eventually(
    () => {
      const list = jobMessages(h, job);
      return list.length >= n ? list : null;
    },
    `${n} messages of ${job}`,
    timeoutMs,
  );
  return got.map((r) => ({
    subject: detailsOf(r).subject as string,
    labels: detailsOf(r)['label-ids'] as string[],
    messageId: detailsOf(r)['message-id'] as string,
  }));
}

/** Lifecycle events of `job` received so far, in arrival order. */
export function lifecycle(h: ImapHarness, job: string): BackfillLifecycleEvent[] {
  return h.receiver.requests
    .map((r) => r.json as BackfillLifecycleEvent)
    .filter((j) => j?.event?.startsWith('HISTORY_BACKFILL_') && j.details.job_id === job);
}

/** Requests to `path` whose body is the event `event`. */
export function eventsTo(h: ImapHarness, path: string, event: string): Received[] {
  return h.receiver.to(path).filter((r) => (r.json as { event?: string })?.event === event);
}

/** Appends a message to the INBOX of `host` over IMAP (as a mail delivery would). */
export async function appendToInbox(host: string, m: DovecotMessage): Promise<void> {
  const client = new ImapFlow({
    host,
    port: 993,
    secure: true,
    auth: { user: USER, pass: PASS },
    logger: false,
  });
  await client.connect();
  await client.append('INBOX', m.raw, [], m.date);
  await client.logout();
}

/** Live sync connection failures counted so far in this process (all watchers). */
export const syncFailures = async (): Promise<number> =>
  (await metricsRegistry.getSingleMetric('mailyard_imap_sync_connection_failures_total')?.get())?.values[0]
    ?.value ?? 0;

/** Where the watcher of `mailer` has read INBOX up to (set once it is watching). */
export const readUpTo = async (h: ImapHarness, mailer: string) =>
  (await h.ctx.db.query('SELECT last_uid FROM imap_sync_state WHERE mailer_id = $1', [mailer])).rows[0];
