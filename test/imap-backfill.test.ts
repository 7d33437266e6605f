/**
 * IMAP history backfill end to end against a real Dovecot (IMAPS on port 993 of a loopback alias
 * of its own, test CA): the gateway API, the imap-backfill worker and the webhook dispatcher on
 * the real PostgreSQL, RabbitMQ and Redis, deliveries to a real HTTP receiver. Resuming
 * (killed, stopped, UIDVALIDITY, retries) is in imap-backfill-resume.test.ts, live sync in
 * imap-live-sync.test.ts.
 */
import { type Server, type Socket, createServer } from 'node:net';
import { ulid } from '@mailyard/contracts';
import { start as startBackfill } from '@mailyard/imap-backfill';
import type { RunningService } from '@mailyard/platform';
import { backfillJobs, createTenant, mailers } from '@mailyard/store';
import { type Dovecot, type DovecotMessage, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { closedLoopbackAddress, listenOnLoopbackAlias } from '@mailyard/testkit/process';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';
import {
  BACKFILL_TEST_ENV,
  DAY,
  type ImapHarness,
  NOW_S,
  PASS,
  T0,
  T1,
  USER,
  abortJob,
  ago,
  createImapMailer,
  delivered,
  eventsTo,
  finished,
  insertImapMailer,
  jobMessages,
  lifecycle,
  mail,
  rfc3339,
  startHarness,
  startJob,
  status,
} from './support/imap';

jest.setTimeout(300_000);

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
  // Participant alice: From, To, Cc; and too old for the default one-year window.
  mail('alice-from', ago(20 * DAY), 'INBOX', { from: 'Alice <alice@peer.test>' }),
  mail('alice-to', ago(21 * DAY), 'INBOX', { from: USER, to: 'alice@peer.test' }),
  mail('alice-cc', ago(22 * DAY), 'INBOX', { cc: 'Bob <bob@peer.test>, alice@peer.test' }),
  mail('alice-old', ago(400 * DAY), 'INBOX', { from: 'alice@peer.test' }),
  // Other folders; the service's own sent mail (X-Is-Svc) sits between two sent messages.
  mail('sent-1', ago(30 * DAY), 'Sent', { from: USER, to: 'x@peer.test' }),
  mail('sent-svc', ago(31 * DAY), 'Sent', { from: USER, to: 'x@peer.test', extra: 'X-Is-Svc: 1' }),
  mail('sent-2', ago(32 * DAY), 'Sent', { from: USER, to: 'x@peer.test' }),
  mail('junk-1', ago(40 * DAY), 'Junk'),
  mail('trash-1', ago(50 * DAY), 'Trash'),
];

const ENV = { ...BACKFILL_TEST_ENV, IMAP_SYNC: '0' };

let h: ImapHarness;
let dovecot: Dovecot;
let services: RunningService[] = [];
let mailerId: string;

beforeAll(async () => {
  h = await startHarness(ENV);
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: SEED });
  services = [await startDispatcher(h.ctx), await startBackfill(h.ctx)];
  mailerId = await createImapMailer(h, '/main', dovecot.host);
});

afterAll(async () => {
  for (const s of services.reverse()) await s.stop();
  await dovecot?.stop();
  await h?.close();
});

/** Every message of a finished job: waits for as many as it posted, then no more are expected. */
async function allOf(job: string, processed: number) {
  const got = await delivered(h, job, processed);
  expect(got).toHaveLength(processed);
  return got;
}

describe('POST /v1/imap/{mailerID}/history', () => {
  it('window bounds are exact to the second (INBOX only by default); status fields as the spec', async () => {
    const res = await startJob(h, mailerId, {
      window_start: T0.toISOString().replace('.000', ''),
      window_end: T1.toISOString(),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, jobId: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/) });
    const job = res.body.jobId;
    const end = await finished(h, mailerId, job);
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
    const got = await allOf(job, 2);
    expect(got.map((m) => m.subject).sort()).toEqual(['edge-end', 'edge-start']);
    expect(got[0]!.labels).toEqual(['INBOX']);
    const req = jobMessages(h, job)[0]!;
    expect(req.headers['x-hook-secret']).toBe('s3cret');
    expect(req.json).toMatchObject({
      event: 'INCOMING_EMAIL',
      success: true,
      details: { 'mailer-id': mailerId, 'mailer-service': 'imap', recipient: USER },
    });
    const events = await eventually(() => {
      const e = lifecycle(h, job).map((x) => x.event);
      return e.includes('HISTORY_BACKFILL_COMPLETED') ? e : null;
    }, 'COMPLETED');
    expect(events[0]).toBe('HISTORY_BACKFILL_STARTED');
  });

  it('participant matches From, To or Cc within the default one-year window', async () => {
    const res = await startJob(h, mailerId, { participant: 'alice@peer.test' });
    expect(res.status).toBe(200);
    const end = await finished(h, mailerId, res.body.jobId);
    expect(end).toMatchObject({ status: 'done', processed: 3 });
    const got = await allOf(res.body.jobId, 3);
    expect(got.map((m) => m.subject).sort()).toEqual(['alice-cc', 'alice-from', 'alice-to']);
  });

  it('the default participant window is one year before now, not before window_end', async () => {
    // window_end 300 days ago: the year before it would reach alice-old (400 days); a year
    // before now does not, and 20-22 days ago is after window_end
    const res = await startJob(h, mailerId, {
      participant: 'alice@peer.test',
      window_end: rfc3339(ago(300 * DAY)),
    });
    expect(res.status).toBe(200);
    expect(await finished(h, mailerId, res.body.jobId)).toMatchObject({ status: 'done', processed: 0 });
    // a window_end after them: alice-from, -to and -cc; alice-old (400 days) stays out
    const wider = await startJob(h, mailerId, {
      participant: 'alice@peer.test',
      window_end: rfc3339(ago(19 * DAY)),
    });
    expect(await finished(h, mailerId, wider.body.jobId)).toMatchObject({ status: 'done', processed: 3 });
  });

  it('fractional seconds in window bounds are truncated to the second, not refused', async () => {
    // edge-start is at T0 exactly: a start of T0 + 0.999 s truncates to T0 and keeps it; the end
    // T1 + 0.5 s truncates to T1 and keeps edge-end but not edge-after (T1 + 1 s)
    const res = await startJob(h, mailerId, {
      window_start: T0.toISOString().replace('.000Z', '.999Z'),
      window_end: T1.toISOString().replace('.000Z', '.5Z'),
    });
    expect(res.status).toBe(200);
    expect(await finished(h, mailerId, res.body.jobId)).toMatchObject({ status: 'done', processed: 2 });
    expect((await allOf(res.body.jobId, 2)).map((m) => m.subject).sort()).toEqual(['edge-end', 'edge-start']);
  });

  it('count is clamped to BACKFILL_MAX_COUNT and takes the newest first; legacy alias works', async () => {
    const res = await startJob(h, mailerId, { count: 50 }, 'legacy');
    expect(res.status).toBe(200);
    const end = await finished(h, mailerId, res.body.jobId);
    expect(end).toMatchObject({ status: 'done', processed: 5, target: 5, percent: 100 });
    const got = await allOf(res.body.jobId, 5);
    expect(got.map((m) => m.subject).sort()).toEqual(['alice-cc', 'alice-from', 'alice-to', 'm01', 'm02']);
    const legacy = await request(h.app).get(`/v1/${mailerId}/backfill/${res.body.jobId}`).set(h.auth);
    expect(legacy.body).toEqual(end);
  });

  it('count takes the newest across folders; the skipped X-Is-Svc mail does not use up a place', async () => {
    const res = await startJob(h, mailerId, {
      count: 3,
      folders: { inbox: false, sent: true, spam: true, trash: true },
    });
    const end = await finished(h, mailerId, res.body.jobId);
    expect(end).toMatchObject({ status: 'done', processed: 3, target: 3 });
    const got = await allOf(res.body.jobId, 3);
    // Newest first: sent-1 (30 days), [sent-svc skipped], sent-2 (32), junk-1 (40); not trash-1 (50).
    expect(got.map((m) => m.subject).sort()).toEqual(['junk-1', 'sent-1', 'sent-2']);
  });

  it('folders flags add Sent, Junk and Trash; X-Is-Svc in Sent is skipped; progress events', async () => {
    const res = await startJob(h, mailerId, {
      window_start: rfc3339(ago(365 * DAY)),
      folders: { sent: true, spam: true, trash: true },
    });
    expect(res.status).toBe(200);
    const job = res.body.jobId;
    const end = await finished(h, mailerId, job);
    // 12 monthly + 4 edge + 3 alice (not the 400-day-old one) + sent-1 + sent-2 + junk-1 + trash-1
    expect(end).toMatchObject({ status: 'done', processed: 23, percent: 100 });
    const got = await allOf(job, 23);
    const by = (s: string) => got.find((m) => m.subject === s)?.labels;
    expect(by('sent-1')).toEqual(['Sent']);
    expect(by('sent-2')).toEqual(['Sent']);
    expect(by('junk-1')).toEqual(['Junk']);
    expect(by('trash-1')).toEqual(['Trash']);
    expect(by('sent-svc')).toBeUndefined();
    expect(by('alice-old')).toBeUndefined();
    const events = await eventually(() => {
      const e = lifecycle(h, job);
      return e.some((x) => x.event === 'HISTORY_BACKFILL_COMPLETED') ? e : null;
    }, 'COMPLETED');
    expect(events[0]!.event).toBe('HISTORY_BACKFILL_STARTED');
    const progress = events
      .filter((e) => e.event === 'HISTORY_BACKFILL_PROGRESS')
      .map((e) => e.details.percent);
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect([...progress].sort((a, b) => a - b)).toEqual([...new Set(progress)].sort((a, b) => a - b));
    expect(events.find((e) => e.event === 'HISTORY_BACKFILL_COMPLETED')).toMatchObject({
      success: true,
      details: {
        job_id: job,
        mailer_id: mailerId,
        status: 'done',
        processed: 23,
        percent: 100,
        ended_at: expect.any(String),
      },
    });
  });

  it('validates the start request (400)', async () => {
    const bad = [
      [{}, 'a full import needs window_start or count'],
      [{ participant: 'Alice <alice@peer.test>' }, 'participant must be one bare email address'],
      [{ participant: 'a@b.test, c@d.test' }, 'participant must be one bare email address'],
      [{ window_start: '2026-01-01' }, 'window_start must be an RFC 3339 timestamp'],
      [{ count: 10, window_end: 'yesterday' }, 'window_end must be an RFC 3339 timestamp'],
      [
        { participant: 'alice@peer.test', window_end: rfc3339(ago(400 * DAY)) },
        'window_end is more than a year ago: window_start defaults to one year before now, give window_start',
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
      const res = await startJob(h, mailerId, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
    }
  });
});

describe('eligibility, one active job, abort', () => {
  it('send-only, webhook-less and disabled mailers are 422; unknown mailers and other tenants 404', async () => {
    const sealed = h.ctx.sealer.seal('pw');
    const conn = { host: dovecot.host, port: 993, username: USER, secure: 'SSL' as const };
    await mailers.create(h.ctx.db, h.tenantId, {
      id: 'basic_smtp_x1',
      configType: 'basic_smtp',
      connectionType: 'basic',
      name: 's',
      email: USER,
      config: { ...conn, port: 465 },
      sealedSecret: sealed,
    });
    await mailers.create(h.ctx.db, h.tenantId, {
      id: 'basic_imap_nohook',
      configType: 'basic_imap',
      connectionType: 'basic',
      name: 'n',
      email: USER,
      config: conn,
      sealedSecret: sealed,
    });
    await insertImapMailer(h, 'basic_imap_disabled', dovecot.host, '/disabled');
    await h.ctx.db.query(`UPDATE mailers SET state = 'disabled' WHERE id = 'basic_imap_disabled'`);
    expect((await startJob(h, 'basic_smtp_x1', { count: 1 })).status).toBe(422);
    expect((await startJob(h, 'basic_imap_nohook', { count: 1 })).status).toBe(422);
    expect((await startJob(h, 'basic_imap_disabled', { count: 1 })).status).toBe(422);
    expect((await startJob(h, 'basic_imap_unknown', { count: 1 })).status).toBe(404);

    const other = await createTenant(h.ctx.db, { name: 'other', tier: 'enterprise' });
    const asOther = { Authorization: `Bearer ${other.apiKey}` };
    const theirs = await request(h.app).post(`/v1/imap/${mailerId}/history`).set(asOther).send({ count: 1 });
    expect(theirs.status).toBe(404);
    const mine = await startJob(h, mailerId, { count: 1 });
    const job = mine.body.jobId;
    await finished(h, mailerId, job);
    expect((await request(h.app).get(`/v1/imap/${mailerId}/history/${job}`).set(asOther)).status).toBe(404);
    expect((await request(h.app).post(`/v1/imap/${mailerId}/history/${job}/abort`).set(asOther)).status).toBe(
      404,
    );
    // Another mailer's path with this job id.
    expect((await status(h, 'basic_imap_nohook', job)).status).toBe(404);
    // Abort of a finished job: 409.
    const abortDone = await abortJob(h, mailerId, job);
    expect(abortDone.status).toBe(409);
    expect(abortDone.body).toMatchObject({ success: false, jobId: job, status: 'done' });
  });

  it('a second start while a job is active is 409 with its jobId (also under a race); abort cancels it', async () => {
    // An IMAPS port that accepts and never greets keeps the job active (greeting timeout, retried).
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    const host = await listenOnLoopbackAlias(silent, 993);
    const stuck = 'basic_imap_stuck';
    await insertImapMailer(h, stuck, host, '/stuck');
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => startJob(h, stuck, { count: 3 })));
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      const job = ok[0]!.body.jobId;
      for (const r of results.filter((x) => x.status !== 200)) {
        expect(r.status).toBe(409);
        expect(r.body).toEqual({
          success: false,
          error: 'active history backfill already exists',
          jobId: job,
        });
      }
      const pending = await status(h, stuck, job);
      expect(['pending', 'processing']).toContain(pending.body.status);
      expect(pending.body.endedAt).toBe('');
      const abort = await abortJob(h, stuck, job);
      expect(abort.status).toBe(200);
      expect(abort.body).toEqual({ success: true, jobId: job, status: 'cancelled' });
      const after = await status(h, stuck, job);
      expect(after.body.status).toBe('cancelled');
      expect(after.body.endedAt).not.toBe('');
      expect((await request(h.app).post(`/v1/${stuck}/backfill/${job}/abort`).set(h.auth)).status).toBe(409);
      // After a terminal state a new job may start.
      const again = await startJob(h, stuck, { count: 1 });
      expect(again.status).toBe(200);
      expect((await abortJob(h, stuck, again.body.jobId)).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('the database decides a start race the Redis lock cannot see: one active job per mailer', async () => {
    await insertImapMailer(h, 'basic_imap_race', dovecot.host, '/race');
    const plan = {
      participant: null,
      windowStart: null,
      windowEnd: new Date(NOW_S),
      count: 1,
      folders: { inbox: true, sent: false, spam: false, trash: false },
    };
    const ids = ['01JRACE0000000000000000001', '01JRACE0000000000000000002'];
    const results = await Promise.all(
      ids.map((id) => backfillJobs.create(h.ctx.db, h.tenantId, 'basic_imap_race', id, plan)),
    );
    const created = results.filter((r) => r.created);
    expect(created).toHaveLength(1);
    const winner = (created[0] as { jobId: string }).jobId;
    expect(results.find((r) => !r.created)).toEqual({ created: false, activeJobId: winner });
    await abortJob(h, 'basic_imap_race', winner);
  });
});

describe('failures', () => {
  it('a rejected password deactivates the mailer (MAILER_DEACTIVATED provider_auth_error) and fails the job', async () => {
    const id = await createImapMailer(h, '/wrongpw', dovecot.host);
    await mailers.update(h.ctx.db, h.tenantId, id, { sealedSecret: h.ctx.sealer.seal('not-the-password') });
    const res = await startJob(h, id, { count: 2 });
    expect(res.status).toBe(200);
    const end = await finished(h, id, res.body.jobId);
    expect(end).toMatchObject({ status: 'failed', failedReason: expect.stringMatching(/authentication/i) });
    expect(end.endedAt).not.toBe('');
    const deactivated = await eventually(
      () => eventsTo(h, '/wrongpw', 'MAILER_DEACTIVATED')[0],
      'MAILER_DEACTIVATED',
    );
    expect(deactivated.json).toMatchObject({
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: { mailer_id: id, config_type: 'basic_imap', failed_reason: 'provider_auth_error' },
    });
    expect(JSON.stringify(deactivated.json)).not.toContain('not-the-password');
    const failed = await eventually(
      () => lifecycle(h, res.body.jobId).find((e) => e.event === 'HISTORY_BACKFILL_FAILED'),
      'FAILED',
    );
    expect(failed.success).toBe(false);
    expect(failed.details.failed_reason).toMatch(/authentication/i);
    // failed before its first slice: still pending -> processing -> failed, STARTED sent once
    expect(
      lifecycle(h, res.body.jobId)
        .map((e) => e.event)
        .sort(),
    ).toEqual(['HISTORY_BACKFILL_FAILED', 'HISTORY_BACKFILL_STARTED']);
    expect((await mailers.get(h.ctx.db, h.tenantId, id))!.state).toBe('deactivated');
    // A deactivated mailer cannot start another.
    expect((await startJob(h, id, { count: 1 })).status).toBe(422);
  });

  it('a job whose mailer is unusable when the worker takes it follows the state table: STARTED, then FAILED', async () => {
    const id = await createImapMailer(h, '/unusable', dovecot.host);
    // disabled after the start was accepted (the job row written as POST start writes it)
    await h.ctx.db.query(`UPDATE mailers SET state = 'disabled' WHERE id = $1`, [id]);
    const jobId = ulid();
    const created = await backfillJobs.create(h.ctx.db, h.tenantId, id, jobId, {
      participant: null,
      windowStart: null,
      windowEnd: new Date(NOW_S),
      count: 1,
      folders: { inbox: true, sent: false, spam: false, trash: false },
    });
    expect(created).toMatchObject({ created: true });
    const end = await finished(h, id, jobId);
    expect(end).toMatchObject({ status: 'failed', processed: 0, failedReason: 'the mailer is disabled' });
    const events = await eventually(() => {
      const e = lifecycle(h, jobId);
      return e.some((x) => x.event === 'HISTORY_BACKFILL_FAILED') ? e : null;
    }, 'FAILED');
    const started = events.filter((e) => e.event === 'HISTORY_BACKFILL_STARTED');
    const failed = events.filter((e) => e.event === 'HISTORY_BACKFILL_FAILED');
    expect([started.length, failed.length, events.length]).toEqual([1, 1, 2]);
    expect(started[0]).toMatchObject({
      success: true,
      details: { job_id: jobId, status: 'processing', percent: 0 },
    });
    expect(failed[0]).toMatchObject({
      success: false,
      details: { status: 'failed', failed_reason: 'the mailer is disabled' },
    });
    expect(Date.parse(started[0]!.details.event_at)).toBeLessThanOrEqual(
      Date.parse(failed[0]!.details.event_at),
    );
  });

  it('transient connection failures retry with back-off, then fail with the reason in the status', async () => {
    // A loopback address whose port 993 was just bound and released: every connect is refused
    // (transient), BACKFILL_RETRY_MAX=3.
    const id = 'basic_imap_refused';
    await insertImapMailer(h, id, await closedLoopbackAddress(993), '/refused');
    const res = await startJob(h, id, { count: 2 });
    const end = await finished(h, id, res.body.jobId);
    expect(end).toMatchObject({
      status: 'failed',
      processed: 0,
      failedReason: expect.stringMatching(/^gave up after 4 attempts: .*(refused|ECONNREFUSED)/i),
    });
    const { rows } = await h.ctx.db.query<{ attempts: number }>(
      'SELECT attempts FROM backfill_jobs WHERE id = $1',
      [res.body.jobId],
    );
    expect(rows[0]!.attempts).toBe(3);
    const failed = await eventually(() => eventsTo(h, '/refused', 'HISTORY_BACKFILL_FAILED')[0], 'FAILED');
    expect(failed.json).toMatchObject({
      success: false,
      details: { status: 'failed', failed_reason: end.failedReason },
    });
    // The mailer stays active: a connection problem is not a credentials problem.
    expect((await mailers.get(h.ctx.db, h.tenantId, id))!.state).toBe('active');
  });
});
