/**
 * IMAP history backfill and live sync end to end against a real Dovecot (IMAPS on port 993 of a
 * loopback alias of its own, test CA): the gateway API, the imap-backfill worker and the webhook
 * dispatcher on the real PostgreSQL, RabbitMQ and Redis, deliveries to a real HTTP receiver.
 */
import type { BackfillLifecycleEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import { LiveSync, backfillSettings, mailboxOpener, start as startBackfill } from '@mailyard/imap-backfill';
import {
  type Config,
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant, mailers } from '@mailyard/store';
import { type Dovecot, type DovecotMessage, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { spawnTs } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import { ImapFlow } from 'imapflow';
import request from 'supertest';

jest.setTimeout(300_000);

const USER = 'owner@mailbox.test';
const PASS = 'Backfill-Secret-1';
const DAY = 86_400_000;
const NOW_S = Math.floor(Date.now() / 1000) * 1000;
const ago = (ms: number) => new Date(NOW_S - ms);
/** Window-bound probe: 100 days ago, to the second. */
const T0 = ago(100 * DAY);
const T1 = new Date(T0.getTime() + 10_000);

function mail(
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

const SEED: DovecotMessage[] = [
  // One INBOX message a month across the year (newest: m01, 10 days ago).
  ...Array.from({ length: 12 }, (_, i) =>
    mail(`m${String(i + 1).padStart(2, '0')}`, ago((10 + i * 30) * DAY + 3600_000), 'INBOX'),
  ),
  // Window bounds: before, at T0, at T1, after.
  mail('edge-before', new Date(T0.getTime() - 1000), 'INBOX'),
  mail('edge-start', T0, 'INBOX'),
  mail('edge-end', T1, 'INBOX'),
  mail('edge-after', new Date(T1.getTime() + 1000), 'INBOX'),
  // Participant alice: From, To, Cc; and only in the body.
  mail('alice-from', ago(20 * DAY), 'INBOX', { from: 'Alice <alice@peer.test>' }),
  mail('alice-to', ago(21 * DAY), 'INBOX', { from: USER, to: 'alice@peer.test' }),
  mail('alice-cc', ago(22 * DAY), 'INBOX', { cc: 'Bob <bob@peer.test>, alice@peer.test' }),
  mail('alice-old', ago(400 * DAY), 'INBOX', { from: 'alice@peer.test' }),
  // Other folders.
  mail('sent-1', ago(30 * DAY), 'Sent', { from: USER, to: 'x@peer.test' }),
  mail('sent-svc', ago(31 * DAY), 'Sent', { from: USER, to: 'x@peer.test', extra: 'X-Is-Svc: 1' }),
  mail('junk-1', ago(40 * DAY), 'Junk'),
  mail('trash-1', ago(50 * DAY), 'Trash'),
];

let stores: Stores;
let dovecot: Dovecot;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let config: Config;
let services: RunningService[] = [];
let app: ReturnType<typeof buildGatewayApp>;
let auth: { Authorization: string };
let tenantId: string;
let mailerId: string;

const ENV = {
  BACKFILL_POLL_MS: '100',
  BACKFILL_SLICE_DAYS: '30',
  BACKFILL_LEASE_MS: '4000',
  BACKFILL_RETRY_BASE_MS: '500',
  IMAP_SYNC: '0',
};

beforeAll(async () => {
  Object.assign(process.env, ENV);
  stores = await createStores();
  receiver = await startWebhookReceiver();
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: SEED });
  config = configFrom({
    ...stores.env,
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    API_KEY_CACHE_MS: '0',
    WEBHOOK_ALLOW_INSECURE: '1',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    WEBHOOK_BATCH_WAIT_MS: '10',
    BACKFILL_MAX_COUNT: '5',
  });
  ctx = await openContext(config, createLogger('imap-backfill-test', 'error'));
  services = [await startDispatcher(ctx), await startBackfill(ctx)];
  app = buildGatewayApp(ctx);
  const tenant = await createTenant(ctx.db, { name: 'backfill', tier: 'enterprise' });
  tenantId = tenant.id;
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
  mailerId = await createImapMailer('/main');
});

afterAll(async () => {
  for (const s of services) await s.stop();
  if (ctx) await closeContext(ctx);
  await dovecot?.stop();
  await receiver?.close();
  await stores?.drop();
});

async function createImapMailer(path: string, host = dovecot.host): Promise<string> {
  const res = await request(app)
    .post('/v1/imapbasic/verify')
    .set(auth)
    .send({
      name: 'Mailbox',
      email: USER,
      config_type: 'imap',
      connection_type: 'basic',
      config: { host, port: 993, username: USER, password: PASS, secure: 'SSL' },
      webhook: { url: receiver.url(path), method: 'POST', headers: { 'X-Hook-Secret': 's3cret' } },
    });
  expect(res.status).toBe(201);
  return res.body.mailer_id as string;
}

const startJob = (mailer: string, body: object, base = 'imap') =>
  request(app)
    .post(base === 'imap' ? `/v1/imap/${mailer}/history` : `/v1/${mailer}/backfill`)
    .set(auth)
    .send(body);
const status = (mailer: string, job: string) =>
  request(app).get(`/v1/imap/${mailer}/history/${job}`).set(auth);

async function finished(mailer: string, job: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const s = await status(mailer, job);
      return ['done', 'failed', 'cancelled'].includes(s.body.status) ? s.body : null;
    },
    `job ${job} to finish`,
    timeoutMs,
  );
}

/** INCOMING_EMAIL subjects delivered for `job` (waits until `n` arrived). */
async function delivered(job: string, n: number): Promise<Array<{ subject: string; labels: string[] }>> {
  const got = await eventually(() => {
    const list = receiver.requests.filter(
      (r) =>
        r.headers['x-history-backfill-job-id'] === job &&
        (r.json as { event: string }).event === 'INCOMING_EMAIL',
    );
    return list.length >= n ? list : null;
  }, `${n} messages of ${job}`);
  return got.map((r) => {
    const d = (r.json as { details: Record<string, unknown> }).details;
    return { subject: d.subject as string, labels: d['label-ids'] as string[] };
  });
}

function lifecycle(job: string): BackfillLifecycleEvent[] {
  return receiver.requests
    .map((r) => r.json as BackfillLifecycleEvent)
    .filter((j) => j?.event?.startsWith('HISTORY_BACKFILL_') && j.details.job_id === job);
}

const settle = () => new Promise((r) => setTimeout(r, 1500));

describe('POST /v1/imap/{mailerID}/history', () => {
  it('window bounds are exact to the second (INBOX only by default); status fields as the spec', async () => {
    const res = await startJob(mailerId, {
      window_start: T0.toISOString().replace('.000', ''),
      window_end: T1.toISOString(),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, jobId: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/) });
    const job = res.body.jobId;
    const end = await finished(mailerId, job);
    expect(end).toEqual({
      success: true,
      jobId: job,
      status: 'done',
      processed: 2,
      target: 0,
      percent: 100,
      startedAt: expect.any(String),
      endedAt: expect.any(String),
    });
    expect(end.endedAt).not.toBe('');
    const got = await delivered(job, 2);
    await settle();
    expect((await delivered(job, 2)).map((m) => m.subject).sort()).toEqual(['edge-end', 'edge-start']);
    expect(got[0]!.labels).toEqual(['INBOX']);
    const req = receiver.requests.find((r) => r.headers['x-history-backfill-job-id'] === job)!;
    expect(req.headers['x-hook-secret']).toBe('s3cret');
    const events = lifecycle(job).map((e) => e.event);
    expect(events[0]).toBe('HISTORY_BACKFILL_STARTED');
    expect(events[events.length - 1]).toBe('HISTORY_BACKFILL_COMPLETED');
  });

  it('participant matches From, To or Cc within the default one-year window', async () => {
    const res = await startJob(mailerId, { participant: 'alice@peer.test' });
    expect(res.status).toBe(200);
    const end = await finished(mailerId, res.body.jobId);
    expect(end.status).toBe('done');
    await settle();
    const got = await delivered(res.body.jobId, 3);
    expect(got.map((m) => m.subject).sort()).toEqual(['alice-cc', 'alice-from', 'alice-to']);
  });

  it('count is clamped to BACKFILL_MAX_COUNT and takes the newest first; legacy alias works', async () => {
    const res = await startJob(mailerId, { count: 50 }, 'legacy');
    expect(res.status).toBe(200);
    const end = await finished(mailerId, res.body.jobId);
    expect(end).toMatchObject({ status: 'done', processed: 5, target: 5, percent: 100 });
    await settle();
    const got = await delivered(res.body.jobId, 5);
    expect(got.map((m) => m.subject).sort()).toEqual(
      ['alice-cc', 'alice-from', 'alice-to', 'm01', 'm02'].sort(),
    );
    const legacy = await request(app).get(`/v1/${mailerId}/backfill/${res.body.jobId}`).set(auth);
    expect(legacy.body).toEqual(end);
  });

  it('folders flags add Sent, Junk and Trash; X-Is-Svc in Sent is skipped; progress events', async () => {
    const res = await startJob(mailerId, {
      window_start: ago(365 * DAY)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
      folders: { sent: true, spam: true, trash: true },
    });
    expect(res.status).toBe(200);
    const job = res.body.jobId;
    const end = await finished(mailerId, job);
    // 12 monthly + 4 edge + 3 alice (not the 400-day-old one) + sent-1 + junk-1 + trash-1
    expect(end).toMatchObject({ status: 'done', processed: 22, percent: 100 });
    await settle();
    const got = await delivered(job, 22);
    expect(got).toHaveLength(22);
    const by = (s: string) => got.find((m) => m.subject === s)?.labels;
    expect(by('sent-1')).toEqual(['Sent']);
    expect(by('junk-1')).toEqual(['Junk']);
    expect(by('trash-1')).toEqual(['Trash']);
    expect(by('sent-svc')).toBeUndefined();
    expect(by('alice-old')).toBeUndefined();
    const events = lifecycle(job);
    expect(events[0]!.event).toBe('HISTORY_BACKFILL_STARTED');
    const progress = events
      .filter((e) => e.event === 'HISTORY_BACKFILL_PROGRESS')
      .map((e) => e.details.percent);
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(events[events.length - 1]).toMatchObject({
      event: 'HISTORY_BACKFILL_COMPLETED',
      success: true,
      details: { job_id: job, mailer_id: mailerId, status: 'done', processed: 22, percent: 100 },
    });
  });

  it('validates the start request (400)', async () => {
    const bad = [
      [{}, 'a full import needs window_start or count'],
      [{ participant: 'Alice <alice@peer.test>' }, 'participant must be one bare email address'],
      [{ participant: 'a@b.test, c@d.test' }, 'participant must be one bare email address'],
      [
        { window_start: '2026-01-01T00:00:00.500Z' },
        'window_start must be an RFC 3339 timestamp with whole-second precision',
      ],
      [
        { window_start: '2026-01-01' },
        'window_start must be an RFC 3339 timestamp with whole-second precision',
      ],
      [
        { count: 10, window_end: 'yesterday' },
        'window_end must be an RFC 3339 timestamp with whole-second precision',
      ],
      [{ count: -1 }, 'count must be a non-negative integer'],
      [{ count: 1.5 }, 'count must be a non-negative integer'],
      [
        { count: 3, folders: { sent: 'yes' } },
        'folders must be an object of booleans: inbox, sent, spam, trash',
      ],
      [
        { count: 3, folders: { drafts: true } },
        'folders must be an object of booleans: inbox, sent, spam, trash',
      ],
      [
        { window_start: '2026-02-01T00:00:00Z', window_end: '2026-01-01T00:00:00Z' },
        'window_start must be before window_end',
      ],
    ] as const;
    for (const [body, error] of bad) {
      const res = await startJob(mailerId, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
    }
  });
});

describe('eligibility, one active job, abort', () => {
  it('send-only mailers and mailers without a webhook are 422; unknown mailers and other tenants 404', async () => {
    const sealed = ctx.sealer.seal('pw');
    const conn = { host: dovecot.host, port: 993, username: USER, secure: 'SSL' as const };
    await mailers.create(ctx.db, tenantId, {
      id: 'basic_smtp_x1',
      configType: 'basic_smtp',
      connectionType: 'basic',
      name: 's',
      email: USER,
      config: { ...conn, port: 465 },
      sealedSecret: sealed,
    });
    await mailers.create(ctx.db, tenantId, {
      id: 'basic_imap_nohook',
      configType: 'basic_imap',
      connectionType: 'basic',
      name: 'n',
      email: USER,
      config: conn,
      sealedSecret: sealed,
    });
    const smtp = await startJob('basic_smtp_x1', { count: 1 });
    expect(smtp.status).toBe(422);
    const nohook = await startJob('basic_imap_nohook', { count: 1 });
    expect(nohook.status).toBe(422);
    expect((await startJob('basic_imap_unknown', { count: 1 })).status).toBe(404);

    const other = await createTenant(ctx.db, { name: 'other', tier: 'enterprise' });
    const theirs = await request(app)
      .post(`/v1/imap/${mailerId}/history`)
      .set({ Authorization: `Bearer ${other.apiKey}` })
      .send({ count: 1 });
    expect(theirs.status).toBe(404);
    const mine = await startJob(mailerId, { count: 1 });
    const job = mine.body.jobId;
    await finished(mailerId, job);
    const asOther = await request(app)
      .get(`/v1/imap/${mailerId}/history/${job}`)
      .set({ Authorization: `Bearer ${other.apiKey}` });
    expect(asOther.status).toBe(404);
    // Another mailer's path with this job id.
    const wrongMailer = await request(app).get(`/v1/imap/basic_imap_nohook/history/${job}`).set(auth);
    expect(wrongMailer.status).toBe(404);
    // Abort of a finished job: 409.
    const abortDone = await request(app).post(`/v1/imap/${mailerId}/history/${job}/abort`).set(auth);
    expect(abortDone.status).toBe(409);
  });

  it('a second start while a job is active is 409 with its jobId (also under a race); abort cancels it', async () => {
    // An IMAP server that never answers keeps the job active (transient errors, retried).
    const stuck = 'basic_imap_stuck';
    await mailers.create(ctx.db, tenantId, {
      id: stuck,
      configType: 'basic_imap',
      connectionType: 'basic',
      name: 'stuck',
      email: USER,
      config: { host: '127.0.0.9', port: 993, username: USER, secure: 'SSL' },
      sealedSecret: ctx.sealer.seal(PASS),
      webhook: {
        info: { url: receiver.url('/stuck'), method: 'POST', headers_present: [] },
        sealedHeaders: null,
      },
    });
    const results = await Promise.all(Array.from({ length: 6 }, () => startJob(stuck, { count: 3 })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    const job = ok[0]!.body.jobId;
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ success: false, error: 'active history backfill already exists', jobId: job });
    }
    const pending = await status(stuck, job);
    expect(['pending', 'processing']).toContain(pending.body.status);
    expect(pending.body.endedAt).toBe('');
    const abort = await request(app).post(`/v1/imap/${stuck}/history/${job}/abort`).set(auth);
    expect(abort.status).toBe(200);
    expect(abort.body).toEqual({ success: true, jobId: job, status: 'cancelled' });
    const after = await status(stuck, job);
    expect(after.body.status).toBe('cancelled');
    expect(after.body.endedAt).not.toBe('');
    expect((await request(app).post(`/v1/${stuck}/backfill/${job}/abort`).set(auth)).status).toBe(409);
    // After a terminal state a new job may start.
    const again = await startJob(stuck, { count: 1 });
    expect(again.status).toBe(200);
    await request(app).post(`/v1/imap/${stuck}/history/${again.body.jobId}/abort`).set(auth).expect(200);
  });
});

describe('failures', () => {
  it('a rejected password deactivates the mailer (MAILER_DEACTIVATED) and fails the job', async () => {
    const id = await createImapMailer('/wrongpw');
    await mailers.update(ctx.db, tenantId, id, { sealedSecret: ctx.sealer.seal('not-the-password') });
    const res = await startJob(id, { count: 2 });
    expect(res.status).toBe(200);
    const end = await finished(id, res.body.jobId);
    expect(end.status).toBe('failed');
    expect(end.endedAt).not.toBe('');
    const deactivated = await eventually(
      () => receiver.to('/wrongpw').find((r) => (r.json as { event: string }).event === 'MAILER_DEACTIVATED'),
      'MAILER_DEACTIVATED',
    );
    expect(deactivated.json).toMatchObject({
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: { mailer_id: id, config_type: 'basic_imap', failed_reason: 'provider_auth_error' },
    });
    expect(JSON.stringify(deactivated.json)).not.toContain('not-the-password');
    const failed = await eventually(
      () => lifecycle(res.body.jobId).find((e) => e.event === 'HISTORY_BACKFILL_FAILED'),
      'FAILED',
    );
    expect(failed.success).toBe(false);
    expect(failed.details.failed_reason).toMatch(/authentication/i);
    expect((await mailers.get(ctx.db, tenantId, id))!.state).toBe('deactivated');
    // A deactivated mailer cannot start another.
    expect((await startJob(id, { count: 1 })).status).toBe(422);
  });
});

describe('abort mid-job and a killed worker resuming (a larger mailbox)', () => {
  let big: Dovecot;
  let bigMailer: string;
  const N = 1500;

  beforeAll(async () => {
    big = await startDovecot({ user: USER, pass: PASS, messages: N });
    bigMailer = await createImapMailer('/big', big.host);
  });
  afterAll(() => big?.stop());

  it('abort mid-job: the worker stops at its next slice; delivered mail stays delivered', async () => {
    const res = await startJob(bigMailer, {
      window_start: ago(366 * DAY)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
    });
    const job = res.body.jobId;
    await eventually(async () => (await status(bigMailer, job)).body.processed > 0, 'first messages');
    const abort = await request(app).post(`/v1/imap/${bigMailer}/history/${job}/abort`).set(auth);
    expect(abort.body).toEqual({ success: true, jobId: job, status: 'cancelled' });
    await settle();
    const a = (await status(bigMailer, job)).body;
    await settle();
    const b = (await status(bigMailer, job)).body;
    expect(b.status).toBe('cancelled');
    expect(b.processed).toBe(a.processed);
    expect(b.processed).toBeLessThan(N);
    expect(lifecycle(job).some((e) => e.event === 'HISTORY_BACKFILL_COMPLETED')).toBe(false);
  });

  it('a worker killed mid-job: the job resumes from its checkpoint and every message arrives', async () => {
    // Only the spawned worker runs jobs now.
    const inProcess = services.pop()!;
    await inProcess.stop();
    const child = spawnTs('services/imap-backfill/src/main.ts', {
      ...stores.env,
      ...ENV,
      OPS_PORT: '0',
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      LOG_LEVEL: 'error',
    });
    try {
      const res = await startJob(bigMailer, {
        window_start: ago(366 * DAY)
          .toISOString()
          .replace(/\.\d+Z$/, 'Z'),
      });
      const job = res.body.jobId;
      await eventually(
        async () => (await status(bigMailer, job)).body.processed >= 100,
        'progress before the kill',
        60_000,
      );
      child.child.kill('SIGKILL');
      await child.exited;
      const atKill = (await status(bigMailer, job)).body;
      expect(atKill.status).toBe('processing');
      services.push(await startBackfill(ctx));
      const end = await finished(bigMailer, job, 150_000);
      expect(end.status).toBe('done');
      expect(end.processed).toBeGreaterThanOrEqual(N);
      const ids = await eventually(
        () => {
          const set = new Set(
            receiver.requests
              .filter(
                (r) =>
                  r.headers['x-history-backfill-job-id'] === job &&
                  (r.json as { event: string }).event === 'INCOMING_EMAIL',
              )
              .map((r) => (r.json as { details: Record<string, string> }).details['message-id']),
          );
          return set.size >= N ? set : null;
        },
        'every message of the big mailbox',
        120_000,
      );
      expect(ids.size).toBe(N);
    } finally {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    }
  });
});

describe('live sync', () => {
  it('a message appended to INBOX arrives once as INCOMING_EMAIL', async () => {
    const settings = backfillSettings(config, { ...process.env, IMAP_SYNC: '1', IMAP_SYNC_POLL_MS: '2000' });
    const id = await createImapMailer('/live');
    const sync = new LiveSync({
      db: ctx.db,
      kv: ctx.kv,
      bus: ctx.bus,
      logger: ctx.logger,
      settings,
      openMailbox: mailboxOpener(ctx.db, ctx.sealer, settings),
      scanMs: 200,
    });
    sync.start();
    try {
      await eventually(async () => {
        const { rows } = await ctx.db.query('SELECT 1 FROM imap_sync_state WHERE mailer_id = $1', [id]);
        return rows.length > 0;
      }, 'the watcher to read INBOX');
      const client = new ImapFlow({
        host: dovecot.host,
        port: 993,
        secure: true,
        auth: { user: USER, pass: PASS },
        logger: false,
      });
      await client.connect();
      await client.append('INBOX', mail('live-1', new Date(), 'INBOX').raw);
      await client.logout();
      const got = await eventually(
        () =>
          receiver
            .to('/live')
            .find((r) => (r.json as { details?: { subject?: string } }).details?.subject === 'live-1'),
        'the live message',
      );
      expect(got.headers['x-history-backfill-job-id']).toBeUndefined();
      expect(got.json).toMatchObject({
        event: 'INCOMING_EMAIL',
        success: true,
        details: {
          'mailer-id': id,
          'mailer-service': 'imap',
          'label-ids': ['INBOX'],
          'message-id': '<live-1@mailbox.test>',
        },
      });
      await settle();
      expect(
        receiver.to('/live').filter((r) => (r.json as { event: string }).event === 'INCOMING_EMAIL'),
      ).toHaveLength(1);
    } finally {
      await sync.stop();
    }
  });
});
