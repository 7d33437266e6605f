/**
 * Reputation and automatic pause end to end on the real servers (PostgreSQL, RabbitMQ): bounces
 * and complaints recorded through the single event writer (as the send, inbound and tracking
 * services record them) pause a sending domain or a mailer; the SENDING_PAUSED event travels
 * outbox -> relay -> bus -> dispatcher to the tenant's EMAIL_EVENT webhook as a one-element array
 * (toggles bypassed); POST /v1/email/send answers 422 with the exact text while paused and 200
 * after POST /v1/domain/{domain}/resume (POST /v1/mailer/{id}/enable for a mailer); the routes are
 * tenant-scoped, resume needs a `full` key and is audited. Small settings (window 20, volume 10).
 */
import {
  type BounceCategory,
  type EmailEvent,
  IdPrefix,
  type ReputationSettings,
  newId,
} from '@mailyard/contracts';
import { type EmailEventRecord, createTenant, mailers, recordEmailEventBatch } from '@mailyard/store';
import { type CopyLog, insertCopies } from '@mailyard/testkit/fixtures';
import { emailEvent, eventually } from '@mailyard/testkit/webhooks';
import request from 'supertest';
import { useDispatcherStack } from './support/dispatcher-stack';

jest.setTimeout(90_000);

const settings: ReputationSettings = { window: 20, bounceRate: 0.05, complaintRate: 0.001, minVolume: 10 };

const stack = useDispatcherStack(
  'reputation-test',
  {
    OUTBOX_POLL_MS: '50',
    WEBHOOK_BATCH_WAIT_MS: '200',
    WEBHOOK_POLL_MS: '100',
    REPUTATION_WINDOW: String(settings.window),
    PAUSE_BOUNCE_RATE: String(settings.bounceRate),
    PAUSE_COMPLAINT_RATE: String(settings.complaintRate),
    PAUSE_MIN_VOLUME: String(settings.minVolume),
  },
  { relay: true },
);

let seq = 0;
interface Account {
  tenantId: string;
  key: string;
  path: string;
  mailerId: string;
}

const as = (key: string) => ({
  get: (path: string) =>
    request(stack.app)
      .get(path)
      .set({ Authorization: `Bearer ${key}` }),
  post: (path: string, body?: object) =>
    request(stack.app)
      .post(path)
      .set({ Authorization: `Bearer ${key}` })
      .send(body ?? {}),
});

/** A tenant with an EMAIL_EVENT webhook subscribed to opens only, and an active SMTP mailer. */
async function account(): Promise<Account> {
  const t = await createTenant(stack.ctx.db, { name: `rep-${++seq}`, tier: 'enterprise' });
  const path = `/rep-${seq}`;
  await as(t.apiKey)
    .post('/v1/webhook/register', {
      webhook_url: stack.receiver.url(path),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: { events: { open: true } },
    })
    .expect(201);
  const mailerId = newId(IdPrefix.basicSmtp);
  await mailers.create(stack.ctx.db, t.id, {
    id: mailerId,
    configType: 'basic_smtp',
    connectionType: 'basic',
    name: 'smtp',
    email: 'a@example.com',
    config: { host: 'smtp.example.com', port: 587, username: 'u', secure: 'Auto' },
    sealedSecret: stack.ctx.sealer.seal('pw'),
  });
  return { tenantId: t.id, key: t.apiKey, path, mailerId };
}

type Log = CopyLog;

/** `n` copies sent from `from` by `a`'s mailer (one send), as the gateway stores them, delivered. */
async function sent(a: Account, from: string, n: number): Promise<Log[]> {
  const logs = await insertCopies(stack.ctx.db, { tenantId: a.tenantId, mailerId: a.mailerId, from, n });
  await record(a, logs, 'MAIL_DELIVERED');
  return logs;
}

function record(a: Account, logs: Log[], name: EmailEvent['event'], category?: BounceCategory) {
  const records: EmailEventRecord[] = logs.map((l) => ({
    tenantId: a.tenantId,
    copyId: l.copyId,
    recipients: [{ logId: l.id, email: l.email }],
    ...(name === 'MAIL_DELIVERED' ? { attempt: 1 } : {}),
    event: emailEvent(name, new Date().toISOString(), {
      ref_id: l.refId,
      mailer_id: a.mailerId,
      email: [l.email],
      custom_args: null,
      ...(category ? { bounce_category: category } : {}),
    }),
  }));
  return recordEmailEventBatch(stack.ctx.db, records, { reputation: settings });
}

const send = (a: Account, from: string) =>
  as(a.key).post('/v1/email/send', {
    mailer_id: a.mailerId,
    from: { email: from },
    to: [{ email: 'someone@x.test' }],
    subject: 'hi',
    content: [{ type: 'text/plain', value: 'hello' }],
  });

const bodies = (path: string) => stack.receiver.to(path).map((r) => r.json as unknown[]);

it('pauses a domain: SENDING_PAUSED to the EMAIL_EVENT webhook, 422 on send, resume by a full key only', async () => {
  const a = await account();
  const b = await account();
  expect((await send(a, 'news@rep-one.example')).status).toBe(200);
  const logs = await sent(a, 'news@rep-one.example', 10);
  // A `reputation` bounce is about the sender's mail, not a dead address: it does not count.
  await record(a, [logs[0]!], 'MAIL_BOUNCE', 'reputation');
  const before = await as(a.key).get('/v1/domain/rep-one.example/reputation').expect(200);
  expect(before.body.data).toMatchObject({ sent: 10, invalid_recipient_bounces: 0, paused: null });
  // 1 of 10 (10 %, above 5 %) pauses; the second bounce while paused pauses nothing more.
  await record(a, [logs[0]!], 'MAIL_BOUNCE', 'invalid_recipient');
  await record(a, [logs[1]!], 'MAIL_BOUNCE', 'invalid_recipient');

  await eventually(() => bodies(a.path).length >= 1, 'SENDING_PAUSED delivered');
  expect(bodies(a.path)).toEqual([
    [
      {
        event: 'SENDING_PAUSED',
        success: false,
        details: {
          scope: 'domain',
          domain: 'rep-one.example',
          metric: 'invalid_recipient_bounce_rate',
          rate: 0.1,
          window: 10,
          threshold: 0.05,
          paused_at: expect.any(String),
        },
      },
    ],
  ]);

  const refused = await send(a, 'news@rep-one.example');
  expect(refused.status).toBe(422);
  expect(refused.body).toEqual({
    success: false,
    error: 'Sending is paused for rep-one.example: 10% invalid-recipient bounces over the last 10 emails',
  });
  // Another From domain of the same mailer still sends.
  expect((await send(a, 'news@rep-two.example')).status).toBe(200);

  const rep = await as(a.key).get('/v1/domain/rep-one.example/reputation').expect(200);
  expect(rep.body.data).toMatchObject({
    domain: 'rep-one.example',
    window: 20,
    sent: 10,
    invalid_recipient_bounces: 2,
    complaints: 0,
    bounce_rate: 0.2,
    thresholds: { bounce_rate: 0.05, complaint_rate: 0.001, min_volume: 10 },
    paused: { scope: 'domain', metric: 'invalid_recipient_bounce_rate', message: refused.body.error },
    mailers: [{ mailer_id: a.mailerId, sent: 10, invalid_recipient_bounces: 2, paused: null }],
  });

  // Another tenant neither reads nor resumes it; a read key of the owner cannot resume.
  await as(b.key).get('/v1/domain/rep-one.example/reputation').expect(404);
  await as(b.key).post('/v1/domain/rep-one.example/resume').expect(404);
  const readKey = await as(a.key).post('/v1/keys', { name: 'reader', scope: 'read' }).expect(201);
  await as(readKey.body.api_key).get('/v1/domain/rep-one.example/reputation').expect(200);
  await as(readKey.body.api_key).post('/v1/domain/rep-one.example/resume').expect(403);
  expect((await send(a, 'news@rep-one.example')).status).toBe(422);

  const resumed = await as(a.key).post('/v1/domain/rep-one.example/resume').expect(200);
  expect(resumed.body).toMatchObject({
    success: true,
    message: 'Sending resumed',
    data: { paused: null, sent: 0 },
  });
  expect((await send(a, 'news@rep-one.example')).status).toBe(200);
  // The old bounces count no more: another bounce of those copies does not pause again.
  await record(a, [logs[2]!], 'MAIL_BOUNCE', 'invalid_recipient');
  expect((await send(a, 'news@rep-one.example')).status).toBe(200);
  const again = await as(a.key).post('/v1/domain/rep-one.example/resume').expect(200);
  expect(again.body.message).toBe('Sending was not paused');
  const audit = await as(a.key).get('/v1/audit?action=resume').expect(200);
  // Both resumes answered 2xx: both are recorded (the 403 and 404 ones are not).
  const entry = expect.objectContaining({
    action: 'resume',
    resource: 'domain',
    resource_id: 'rep-one.example',
  });
  expect(audit.body.data).toEqual([entry, entry]);
  expect(bodies(a.path)).toHaveLength(1);
});

it('pauses a mailer on complaints across its From domains; enable resumes it', async () => {
  const a = await account();
  const logs: Log[] = [];
  for (let i = 0; i < 10; i++) logs.push(...(await sent(a, `a@m${i}.rep-mailer.example`, 1)));
  await record(a, [logs[4]!], 'MAIL_SPAM');
  await eventually(() => bodies(a.path).length >= 1, 'SENDING_PAUSED delivered');
  expect(bodies(a.path)[0]).toEqual([
    expect.objectContaining({
      event: 'SENDING_PAUSED',
      details: expect.objectContaining({
        scope: 'mailer',
        mailer_id: a.mailerId,
        domain: 'm4.rep-mailer.example',
        metric: 'complaint_rate',
        rate: 0.1,
      }),
    }),
  ]);
  const refused = await send(a, 'a@elsewhere.example');
  expect(refused.status).toBe(422);
  expect(refused.body.error).toBe(
    `Sending is paused for mailer ${a.mailerId}: 10% complaints over the last 10 emails`,
  );

  const enabled = await as(a.key).post(`/v1/mailer/${a.mailerId}/enable`).expect(200);
  expect(enabled.body.message).toBe('Mailer enabled; sending resumed');
  expect((await send(a, 'a@elsewhere.example')).status).toBe(200);
  const again = await as(a.key).post(`/v1/mailer/${a.mailerId}/enable`).expect(200);
  expect(again.body.message).toBe('Mailer was already active');
});
