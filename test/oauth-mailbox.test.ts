/**
 * Live mail and history backfill of OAuth mailboxes end to end: OAuth apps and mailers connected
 * through the gateway API against the Google and Microsoft identity stand-ins, the Gmail API and
 * Graph stand-ins accepting exactly the access tokens those issued for the account (TLS, test
 * CA), the imap-backfill service (job worker and live sync, real token lifecycle) and the webhook
 * dispatcher on the real PostgreSQL, RabbitMQ and Redis, deliveries to a real HTTP receiver.
 *
 * Gmail: exact windows, participant (from: OR to:) with `count` newest first across folders, every
 * folder with a message in INBOX and SENT posted once and the service's own sent mail skipped,
 * `mailer-service: gmail` with Gmail's thread and labels; Outlook: a participant search past the
 * 1000-result cap (the window split) and `mailer-service: outlook`; live INBOX mail posted once
 * for both; eligibility (send-only OAuth mailers 422); a 429 with Retry-After the job rides out;
 * a grant revoked mid-job: the job fails and exactly one MAILER_DEACTIVATED (oauth_revoked).
 */
import { RoutingKey } from '@mailyard/contracts';
import { start as startBackfill } from '@mailyard/imap-backfill';
import { type RunningService, metricsRegistry } from '@mailyard/platform';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import {
  type MicrosoftIdentityStandIn,
  startMicrosoftIdentity,
} from '@mailyard/testkit/peers/microsoft-identity';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';
import {
  BACKFILL_TEST_ENV,
  DAY,
  type ImapHarness,
  T0,
  T1,
  ago,
  eventsTo,
  finished,
  jobMessages,
  lifecycle,
  mail,
  rfc3339,
  startHarness,
  startJob,
} from './support/imap';
import { REDIRECT, connectMailer, registerOAuthApps } from './support/oauth';

jest.setTimeout(300_000);

const GMAIL_USER = 'owner@gmail.test';
const OUTLOOK_USER = 'owner@outlook.test';
const GMAIL_READ = 'https://www.googleapis.com/auth/gmail.readonly';
/** Bob's Outlook messages: more than one participant search answers. */
const BOB_N = 1100;

const ENV = {
  ...BACKFILL_TEST_ENV,
  BACKFILL_API_CONCURRENCY: '4',
  IMAP_SYNC: '1',
  IMAP_SYNC_POLL_MS: '300',
  IMAP_SYNC_LEASE_MS: '3000',
  // Published outbox rows are kept (marked sent): the revoked grant's test counts the events written.
  OUTBOX_RETENTION_MS: '3600000',
};

const raw = (id: string, h: Parameters<typeof mail>[3] = {}, date = new Date()) =>
  mail(id, date, 'INBOX', h).raw;

let google: GoogleOAuthStandIn;
let microsoft: MicrosoftIdentityStandIn;
let gmail: GmailStandIn;
let graph: GraphStandIn;
let h: ImapHarness;
let services: RunningService[] = [];
let gmailMailer: string;
let outlookMailer: string;
const gmailIds = new Map<string, string>();

function seedGmail(s: GmailStandIn): void {
  const add = (id: string, date: Date, labelIds: string[], hd: Parameters<typeof mail>[3] = {}) =>
    gmailIds.set(id, s.add({ raw: raw(id, hd, date), labelIds, internalDate: date }).id);
  add('edge-before', new Date(T0.getTime() - 1000), ['INBOX']);
  add('edge-start', T0, ['INBOX', 'UNREAD']);
  add('edge-end', T1, ['INBOX']);
  add('edge-after', new Date(T1.getTime() + 1000), ['INBOX']);
  add('alice-from', ago(20 * DAY), ['INBOX'], { from: 'Alice <alice@peer.test>' });
  add('alice-to', ago(21 * DAY), ['SENT'], { from: GMAIL_USER, to: 'alice@peer.test' });
  add('alice-cc', ago(22 * DAY), ['INBOX'], { cc: 'Bob <bob@peer.test>, alice@peer.test' });
  add('alice-old', ago(400 * DAY), ['INBOX'], { from: 'alice@peer.test' });
  add('sent-1', ago(30 * DAY), ['SENT'], { from: GMAIL_USER, to: 'x@peer.test' });
  add('sent-svc', ago(31 * DAY), ['SENT'], { from: GMAIL_USER, to: 'x@peer.test', extra: 'X-Is-Svc: 1' });
  add('self', ago(32 * DAY), ['INBOX', 'SENT'], { from: GMAIL_USER, to: GMAIL_USER });
  add('spam-1', ago(40 * DAY), ['SPAM']);
  add('trash-1', ago(50 * DAY), ['TRASH']);
  for (let i = 0; i < 12; i++) add(`m${i}`, ago((60 + i * 20) * DAY + 3600_000), ['INBOX']);
}

function seedGraph(s: GraphStandIn): void {
  const base = ago(210 * DAY).getTime();
  for (let i = 0; i < BOB_N; i++) {
    const at = new Date(base + i * 785_000);
    s.add({
      raw: raw(`bob-${i}`, { from: 'Bob <bob@peer.test>', to: OUTLOOK_USER }, at),
      receivedDateTime: at,
    });
  }
  for (let i = 0; i < 5; i++) {
    const at = ago((300 + i) * DAY);
    s.add({ raw: raw(`g-${i}`, { to: OUTLOOK_USER }, at), receivedDateTime: at });
  }
  const sentAt = ago(302 * DAY);
  s.add({
    raw: raw('o-sent', { from: OUTLOOK_USER, to: 'x@peer.test' }, sentAt),
    folder: 'sentitems',
    receivedDateTime: sentAt,
  });
}

beforeAll(async () => {
  [google, microsoft] = await Promise.all([startGoogleOAuth(), startMicrosoftIdentity()]);
  [gmail, graph] = await Promise.all([
    startGmailApi({ email: GMAIL_USER, bearer: google.auth.bearer(GMAIL_USER, GMAIL_READ) }),
    startGraphApi({ email: OUTLOOK_USER, bearer: microsoft.auth.bearer(OUTLOOK_USER, 'Mail.Read') }),
  ]);
  // Existing mail is there before the mailers connect: it is the backfill's, not live mail.
  seedGmail(gmail);
  seedGraph(graph);
  h = await startHarness({
    ...ENV,
    GOOGLE_OAUTH_URL: google.url,
    GMAIL_API_URL: `${gmail.url}/`,
    MICROSOFT_LOGIN_URL: microsoft.url,
    MICROSOFT_GRAPH_URL: graph.url,
    OAUTH_REDIRECT_URI: REDIRECT,
  });
  services = [await startDispatcher(h.ctx), await startBackfill(h.ctx)];
  const { googleApp, msApp } = await registerOAuthApps(h, google, microsoft);
  gmailMailer = await connect(google, GMAIL_USER, { app_id: googleApp, type: 'imap' }, '/gmail');
  outlookMailer = await connect(microsoft, OUTLOOK_USER, { app_id: msApp, type: 'smtp_imap' }, '/outlook');
});

afterAll(async () => {
  for (const s of services.reverse()) await s.stop();
  await h?.close();
  await Promise.all([gmail?.close(), graph?.close(), google?.close(), microsoft?.close()]);
});

/** login -> consent at the stand-in -> callback; then the incoming webhook at `path` (if any). */
async function connect(
  idp: GoogleOAuthStandIn | MicrosoftIdentityStandIn,
  account: string,
  body: object,
  path: string | null,
): Promise<string> {
  const id = await connectMailer(h, idp, account, body);
  if (path)
    await request(h.app)
      .put('/v1/mailer/imap')
      .set(h.auth)
      .send({ mailer_id: id, webhook: { url: h.receiver.url(path), method: 'POST' } })
      .expect(200);
  return id;
}

type Details = Record<string, unknown> & { subject: string };
const detailsOf = (job: string): Details[] =>
  jobMessages(h, job).map((r) => (r.json as { details: Details }).details);

/** The INCOMING_EMAIL of a finished job: as many as it says it posted. */
async function postedBy(job: string, processed: number): Promise<Details[]> {
  await eventually(() => jobMessages(h, job).length >= processed || null, `${processed} posts of ${job}`);
  return detailsOf(job);
}

const subjects = (d: Details[]) => d.map((x) => x.subject).sort();
const watched = async () =>
  (await metricsRegistry.getSingleMetric('mailyard_imap_sync_watched')?.get())?.values[0]?.value ?? 0;

describe('Gmail mailbox backfill', () => {
  it('the window is exact to the second; INCOMING_EMAIL says gmail with Gmail thread and labels', async () => {
    const res = await startJob(h, gmailMailer, { window_start: rfc3339(T0), window_end: rfc3339(T1) });
    expect(res.status).toBe(200);
    const job = res.body.jobId;
    expect(await finished(h, gmailMailer, job)).toMatchObject({ status: 'done', processed: 2, percent: 100 });
    const got = await postedBy(job, 2);
    expect(subjects(got)).toEqual(['edge-end', 'edge-start']);
    const start = got.find((d) => d.subject === 'edge-start')!;
    const stored = gmail.messages().find((m) => m.id === gmailIds.get('edge-start'))!;
    expect(start).toMatchObject({
      'mailer-id': gmailMailer,
      'mailer-service': 'gmail',
      'thread-id': stored.threadId,
      'label-ids': ['INBOX', 'UNREAD'],
      'message-id': '<edge-start@mailbox.test>',
      recipient: GMAIL_USER,
    });
    expect(jobMessages(h, job)[0]!.headers['x-history-backfill-job-id']).toBe(job);
    const events = await eventually(() => {
      const e = lifecycle(h, job).map((x) => x.event);
      return e.includes('HISTORY_BACKFILL_COMPLETED') ? e : null;
    }, 'COMPLETED');
    expect(events[0]).toBe('HISTORY_BACKFILL_STARTED');
  });

  it('participant (Gmail from: OR to:, as the spec) with count takes the newest first across the chosen folders', async () => {
    const res = await startJob(h, gmailMailer, {
      participant: 'alice@peer.test',
      window_start: rfc3339(ago(60 * DAY)),
      count: 2,
      folders: { sent: true },
    });
    const job = res.body.jobId;
    expect(await finished(h, gmailMailer, job)).toMatchObject({ status: 'done', processed: 2, target: 2 });
    const got = await postedBy(job, 2);
    expect(subjects(got)).toEqual(['alice-from', 'alice-to']);
    expect(got.find((d) => d.subject === 'alice-to')!['label-ids']).toEqual(['SENT']);
    // Without count and a year back: From and To (SENT), not the 400-day-old one; the query has
    // no cc: term (the stand-in's to: matches To only, so alice-cc is not found).
    const before = gmail.requests.length;
    const all = await startJob(h, gmailMailer, { participant: 'alice@peer.test', folders: { sent: true } });
    expect(await finished(h, gmailMailer, all.body.jobId)).toMatchObject({ status: 'done', processed: 2 });
    expect(subjects(await postedBy(all.body.jobId, 2))).toEqual(['alice-from', 'alice-to']);
    const queries = gmail.requests
      .slice(before)
      .map((r) => r.url.searchParams.get('q'))
      .filter((q): q is string => q !== null);
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) expect(q).toContain('{from:alice@peer.test to:alice@peer.test}');
  });

  it('every folder: a message in INBOX and SENT is posted once, the service mail in SENT is skipped', async () => {
    const res = await startJob(h, gmailMailer, {
      window_start: rfc3339(ago(55 * DAY)),
      folders: { inbox: true, sent: true, spam: true, trash: true },
    });
    const job = res.body.jobId;
    // edge x4 are older; alice-from, alice-cc, alice-to, sent-1, self, spam-1, trash-1
    const end = await finished(h, gmailMailer, job);
    expect(end).toMatchObject({ status: 'done', processed: 7 });
    const got = await postedBy(job, 7);
    expect(subjects(got)).toEqual([
      'alice-cc',
      'alice-from',
      'alice-to',
      'self',
      'sent-1',
      'spam-1',
      'trash-1',
    ]);
    expect(got.find((d) => d.subject === 'self')!['label-ids']).toEqual(['INBOX', 'SENT']);
    expect(got.find((d) => d.subject === 'spam-1')!['label-ids']).toEqual(['SPAM']);
  });
});

describe('eligibility of OAuth mailers', () => {
  it('a send-only OAuth mailer (oauth_smtp) is 422; an OAuth mailer without a webhook is 422', async () => {
    const appId = (await request(h.app).get('/v1/oauth/apps').set(h.auth)).body.data[0].app_id;
    const sender = await connect(google, GMAIL_USER, { app_id: appId, type: 'smtp' }, null);
    expect(sender).toMatch(/^oauth_smtp_/);
    const refused = await startJob(h, sender, { count: 1 });
    expect(refused.status).toBe(422);
    const hookless = await connect(google, GMAIL_USER, { app_id: appId, type: 'imap' }, null);
    expect((await startJob(h, hookless, { count: 1 })).status).toBe(422);
  });
});

describe('Outlook mailbox backfill', () => {
  it('a participant search past the 1000-result cap is split until every message is posted', async () => {
    const before = graph.requests.length;
    const res = await startJob(h, outlookMailer, {
      participant: 'bob@peer.test',
      window_start: rfc3339(ago(211 * DAY)),
      window_end: rfc3339(ago(199 * DAY)),
    });
    const job = res.body.jobId;
    expect(await finished(h, outlookMailer, job, 240_000)).toMatchObject({
      status: 'done',
      processed: BOB_N,
    });
    const got = await postedBy(job, BOB_N);
    expect(new Set(got.map((d) => d.subject)).size).toBe(BOB_N);
    const searches = graph.requests.slice(before).filter((r) => r.url.searchParams.has('$search'));
    expect(searches.length).toBeGreaterThan(1);
    const one = graph.messages().find((m) => m.headers.subject === 'bob-7')!;
    expect(got.find((d) => d.subject === 'bob-7')).toMatchObject({
      'mailer-service': 'outlook',
      'thread-id': one.conversationId,
      'label-ids': ['inbox'],
      'mailer-id': outlookMailer,
    });
  });

  it('a 429 with Retry-After: waited out in the client, then by the job (retried from its checkpoint); the job completes', async () => {
    // One message answers 429 six times: the client's four tries, then the job's retry gets two more.
    const busy = `/${encodeURIComponent(graph.messages().find((m) => m.headers.subject === 'g-2')!.id)}/$value`;
    graph.fail({
      status: 429,
      retryAfter: '1',
      body: graph.error('TooManyRequests', 'Application is over its MailboxConcurrency limit.'),
      times: 6,
      match: (r) => r.url.pathname.endsWith(busy),
    });
    const from = graph.requests.length;
    const res = await startJob(h, outlookMailer, {
      window_start: rfc3339(ago(306 * DAY)),
      window_end: rfc3339(ago(299 * DAY)),
      folders: { sent: true },
    });
    const job = res.body.jobId;
    expect(await finished(h, outlookMailer, job)).toMatchObject({ status: 'done' });
    // At-least-once: what the first run posted but had not checkpointed is posted again.
    const got = await eventually(
      () => (new Set(subjects(detailsOf(job))).size >= 6 ? detailsOf(job) : null),
      'six messages',
    );
    expect([...new Set(subjects(got))]).toEqual(['g-0', 'g-1', 'g-2', 'g-3', 'g-4', 'o-sent']);
    // Four tries in the client (each after the Retry-After of 1 s), the job retried, two more 429s, then the source.
    const tries = graph.requests.slice(from).filter((r) => r.url.pathname.endsWith(busy));
    expect(tries).toHaveLength(7);
    for (let i = 1; i < tries.length; i++)
      expect(tries[i]!.at - tries[i - 1]!.at).toBeGreaterThanOrEqual(950);
  });
});

describe('live mail of OAuth mailboxes', () => {
  const stateOf = async (mailer: string) =>
    (await h.ctx.db.query('SELECT cursor FROM imap_sync_state WHERE mailer_id = $1', [mailer])).rows[0];
  const live = (path: string, subject: string) =>
    eventsTo(h, path, 'INCOMING_EMAIL').filter(
      (r) =>
        !r.headers['x-history-backfill-job-id'] &&
        (r.json as { details: Details }).details.subject === subject,
    );

  it('Gmail: a message added to INBOX arrives once; SENT mail and older mail do not', async () => {
    await eventually(() => stateOf(gmailMailer), 'the Gmail watcher to take its position');
    const n = gmail.add({ raw: raw('live-g1', { to: GMAIL_USER }), labelIds: ['INBOX', 'UNREAD'] });
    gmail.add({ raw: raw('live-g-sent', { from: GMAIL_USER }), labelIds: ['SENT'] });
    const got = await eventually(() => live('/gmail', 'live-g1')[0], 'live-g1');
    expect(got.json).toMatchObject({
      event: 'INCOMING_EMAIL',
      details: {
        'mailer-service': 'gmail',
        'thread-id': n.threadId,
        'label-ids': ['INBOX', 'UNREAD'],
        'message-id': '<live-g1@mailbox.test>',
      },
    });
    // A later message as a barrier: by the time it arrived, a repeat of live-g1 would have too.
    gmail.add({ raw: raw('live-g2', { to: GMAIL_USER }) });
    await eventually(() => live('/gmail', 'live-g2')[0], 'live-g2');
    expect(live('/gmail', 'live-g1')).toHaveLength(1);
    expect(live('/gmail', 'live-g-sent')).toHaveLength(0);
    const liveAll = eventsTo(h, '/gmail', 'INCOMING_EMAIL').filter(
      (r) => !r.headers['x-history-backfill-job-id'],
    );
    expect(liveAll).toHaveLength(2);
  });

  it('Outlook: a message delivered to the inbox arrives once', async () => {
    await eventually(() => stateOf(outlookMailer), 'the Outlook watcher to take its position');
    const n = graph.add({ raw: raw('live-o1', { to: OUTLOOK_USER }) });
    const got = await eventually(() => live('/outlook', 'live-o1')[0], 'live-o1');
    expect(got.json).toMatchObject({
      details: { 'mailer-service': 'outlook', 'thread-id': n.conversationId, 'label-ids': ['inbox'] },
    });
    graph.add({ raw: raw('live-o2', { to: OUTLOOK_USER }) });
    await eventually(() => live('/outlook', 'live-o2')[0], 'live-o2');
    expect(live('/outlook', 'live-o1')).toHaveLength(1);
    const liveAll = eventsTo(h, '/outlook', 'INCOMING_EMAIL').filter(
      (r) => !r.headers['x-history-backfill-job-id'],
    );
    expect(liveAll).toHaveLength(2);
  });
});

describe('revocation', () => {
  it('a grant revoked mid-job: the job fails, exactly one MAILER_DEACTIVATED (oauth_revoked), no longer watched', async () => {
    let raws = 0;
    gmail.fail({
      status: 500,
      match: (r) => {
        // The consent is withdrawn while the job fetches its fifth source.
        if (r.url.searchParams.get('format') === 'raw' && ++raws === 5) google.auth.revoke(GMAIL_USER);
        return false;
      },
    });
    const res = await startJob(h, gmailMailer, {
      window_start: rfc3339(ago(365 * DAY)),
      folders: { inbox: true, sent: true, spam: true, trash: true },
    });
    const job = res.body.jobId;
    const end = await finished(h, gmailMailer, job);
    expect(end).toMatchObject({
      status: 'failed',
      failedReason: expect.stringMatching(/^Gmail API authentication failed: the OAuth grant .*revoked/),
    });
    expect(raws).toBeGreaterThanOrEqual(5);
    const failed = await eventually(
      () => lifecycle(h, job).find((e) => e.event === 'HISTORY_BACKFILL_FAILED'),
      'FAILED',
    );
    expect(failed.success).toBe(false);
    const deactivated = await eventually(
      () => eventsTo(h, '/gmail', 'MAILER_DEACTIVATED')[0],
      'MAILER_DEACTIVATED',
    );
    expect(deactivated.json).toEqual({
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: {
        mailer_id: gmailMailer,
        config_type: 'oauth_imap',
        failed_reason: 'oauth_revoked',
        provider_error: 'invalid_grant: Token has been expired or revoked.',
      },
    });
    const view = await request(h.app).get(`/v1/mailer/${gmailMailer}`).set(h.auth).expect(200);
    expect(view.body.data).toMatchObject({ state: 'deactivated', state_reason: 'oauth_revoked' });
    // Live sync let go of the mailer (only Outlook is watched); neither it nor the job wrote a second event.
    await eventually(async () => (await watched()) === 1 || null, 'live sync to drop the mailer');
    const { rows } = await h.ctx.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM outbox WHERE routing_key = $1 AND message::text LIKE $2',
      [RoutingKey.mailerDeactivated, `%${gmailMailer}%`],
    );
    expect(Number(rows[0]!.n)).toBe(1);
    expect(eventsTo(h, '/gmail', 'MAILER_DEACTIVATED')).toHaveLength(1);
    // A deactivated mailer cannot start another job.
    expect((await startJob(h, gmailMailer, { count: 1 })).status).toBe(422);
  });
});
