/**
 * SparkPost mailers end to end on the real PostgreSQL and RabbitMQ (docs/api/mailers.md
 * "SparkPost mailers", docs/providers.md "SparkPost client"): the gateway's HTTP API creates,
 * shows, updates and deletes the mailer; the send service hands each copy to a local HTTPS
 * stand-in of SparkPost's Transmissions API (libs/testkit/peers/sparkpost-api.ts, SparkPost's
 * documented request, answer and error formats).
 *
 * - create: the callback password is returned once (stored as its digest), never by GET or list;
 *   the API key never leaves; another tenant's mailer id reads as 404 everywhere.
 * - send: one transmission per copy, To/Cc/Bcc recipients, metadata ref_id + copy_id, SparkPost's
 *   tracking off, our MIME (our Message-ID, DKIM of the tenant's verified From domain, no Bcc
 *   header); the log stays QUEUED, no MAIL_DELIVERED (that comes from the callback).
 * - an accepted copy is never sent again: a redelivered command skips it, the embedded crash
 *   recovery does not list it.
 * - a 503 then success: one SMTP_ERROR with retry_scheduled, then accepted.
 * - a 400: a final SMTP_ERROR with SparkPost's message as provider_error.
 * - a revoked key (401): final SMTP_ERROR, the mailer deactivated (provider_auth_error) with one
 *   MAILER_DEACTIVATED; a new api_key re-activates it.
 */
import { createHash } from 'node:crypto';
import { BusMessages, Exchange, Queue, RoutingKey, commandOfOneCopy, ulid } from '@mailyard/contracts';
import { type ServiceContext, envelope, metricsRegistry } from '@mailyard/platform';
import { createTenant, findUnfinishedCopies } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { messageHeaders } from '@mailyard/testkit/peers/api-stand-in';
import { type SparkPostStandIn, startSparkPostApi } from '@mailyard/testkit/peers/sparkpost-api';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import request from 'supertest';
import { type SendStack, startSendStack } from './support/send-stack';

jest.setTimeout(120_000);

const TRACKING = 'https://track.sparkpost-send.test';

let stack: SendStack;
let sparkpost: SparkPostStandIn;
let ctx: ServiceContext;
let app: SendStack['app'];
let auth: { Authorization: string };
let otherAuth: { Authorization: string };
let tenantId: string;

beforeAll(async () => {
  sparkpost = await startSparkPostApi();
  stack = await startSendStack('sparkpost-send', {
    SPARKPOST_API_URL: sparkpost.url,
    TRACKING_BASE_URL: TRACKING,
    SEND_RETRY_DELAYS: '0',
    SEND_MAX_ATTEMPTS: '3',
  });
  ({ ctx, app } = stack);
  const tenant = await createTenant(ctx.db, { name: 'sparkpost', tier: 'enterprise' });
  const other = await createTenant(ctx.db, { name: 'sparkpost-other', tier: 'enterprise' });
  tenantId = tenant.id;
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
  otherAuth = { Authorization: `Bearer ${other.apiKey}` };
});

const afterAllCleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const cleanup of afterAllCleanups) await cleanup();
  await stack?.stop();
  await sparkpost?.close();
});

async function createMailer(apiKey: string, extra: Record<string, unknown> = {}) {
  const res = await request(app)
    .post('/v1/mailer/sparkpost')
    .set(auth)
    .send({ name: 'SparkPost', email: 'news@sp.example.test', config: { api_key: apiKey, ...extra } })
    .expect(201);
  return res.body as {
    mailer_id: string;
    callback: { url: string; username: string; password: string };
  };
}

async function send(mailerId: string, body: Record<string, unknown> = {}, status = 200): Promise<string> {
  const res = await request(app)
    .post('/v1/email/send')
    .set(auth)
    .send({
      from: { email: 'hello@signed.sp.test', name: 'Sender' },
      to: [{ email: 'ann@example.com' }],
      mailer_id: mailerId,
      subject: 'Hello through SparkPost',
      content: [{ type: 'text/plain', value: 'hello' }],
      ...body,
    })
    .expect(status);
  return res.body.ref_id;
}

type EventRow = { event: string; attempt: number; details: Record<string, unknown> };
async function eventsOf(refId: string): Promise<EventRow[]> {
  const { rows } = await ctx.db.query<EventRow>(
    `SELECT event, attempt, payload->'details' AS details FROM email_events WHERE ref_id = $1 ORDER BY id`,
    [refId],
  );
  return rows;
}

async function skipped(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('mailyard_send_commands_skipped_total')?.get();
  return metric?.values[0]?.value ?? 0;
}

const transmissionsOf = (refId: string) =>
  sparkpost.transmissions.filter((t) => t.metadata?.ref_id === refId);
const requestsOf = (refId: string) =>
  sparkpost.requests.filter((r) => r.body.toString('utf8').includes(`"ref_id":"${refId}"`));

describe('SparkPost mailer API', () => {
  it('creates a mailer with callback credentials shown once; GET and list never show the key or password', async () => {
    const key = sparkpost.newKey();
    const created = await createMailer(key);
    const id = created.mailer_id;
    expect(id).toMatch(/^sparkpost_/);
    expect(created.callback).toEqual({
      url: `${TRACKING}/callbacks/sparkpost/${id}`,
      username: id,
      password: expect.stringMatching(/^spcb_[A-Za-z0-9_-]{43}$/),
    });
    const { rows } = await ctx.db.query<{ callback_username: string; callback_password_digest: Buffer }>(
      'SELECT callback_username, callback_password_digest FROM mailers WHERE id = $1',
      [id],
    );
    expect(rows[0]!.callback_username).toBe(id);
    expect(rows[0]!.callback_password_digest).toEqual(
      createHash('sha256').update(created.callback.password).digest(),
    );

    const got = await request(app).get(`/v1/mailer/${id}`).set(auth).expect(200);
    expect(got.body.data).toMatchObject({
      mailer_id: id,
      config_type: 'sparkpost',
      state: 'active',
      config: { base_url: null, api_key_set: true },
      callback: { url: created.callback.url, username: id },
    });
    const list = await request(app).get('/v1/mailers').set(auth).expect(200);
    expect(list.body.data.map((m: { mailer_id: string }) => m.mailer_id)).toContain(id);
    for (const text of [JSON.stringify(got.body), JSON.stringify(list.body)]) {
      expect(text).not.toContain(created.callback.password);
      expect(text).not.toContain(key);
    }
  });

  it('validates the payload and keeps the key with its destination', async () => {
    const post = (config: unknown) =>
      request(app).post('/v1/mailer/sparkpost').set(auth).send({ name: 'x', email: 'x@sp.test', config });
    expect((await post({})).status).toBe(400);
    expect((await post({ api_key: 'k', base_url: 'http://api.eu.sparkpost.com' })).body.error).toBe(
      'config.base_url must be an https URL without path, query or credentials',
    );
    // A base_url on a loopback address is refused by the mailer host check.
    expect((await post({ api_key: 'k', base_url: 'https://127.0.0.1:9' })).status).toBe(422);

    const { mailer_id } = await createMailer(sparkpost.newKey());
    const put = (body: Record<string, unknown>) =>
      request(app)
        .put('/v1/mailer/sparkpost')
        .set(auth)
        .send({ mailer_id, ...body });
    const moved = await put({ config: { base_url: 'https://api.eu.sparkpost.com' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toBe(
      'config.api_key is required when base_url changes: the stored API key is not sent to a new destination',
    );
    await put({ name: 'Renamed' }).expect(200);
    const got = await request(app).get(`/v1/mailer/${mailer_id}`).set(auth).expect(200);
    expect(got.body.data.name).toBe('Renamed');
    // The SMTP update path refuses it.
    await request(app).put('/v1/mailer/smtp').set(auth).send({ mailer_id, name: 'n' }).expect(422);
  });

  it('reads another tenant’s SparkPost mailer as 404', async () => {
    const { mailer_id } = await createMailer(sparkpost.newKey());
    await request(app).get(`/v1/mailer/${mailer_id}`).set(otherAuth).expect(404);
    await request(app).put('/v1/mailer/sparkpost').set(otherAuth).send({ mailer_id, name: 'x' }).expect(404);
    await request(app).delete(`/v1/mailer/${mailer_id}`).set(otherAuth).expect(404);
    await request(app)
      .post('/v1/email/send')
      .set(otherAuth)
      .send({
        from: { email: 'a@b.test' },
        to: [{ email: 'c@d.test' }],
        mailer_id,
        subject: 's',
        content: [{ type: 'text/plain', value: 'x' }],
      })
      .expect(404);
    await request(app).delete(`/v1/mailer/${mailer_id}`).set(auth).expect(200);
    const { rows } = await ctx.db.query(
      'SELECT callback_password_digest, secret FROM mailers WHERE id = $1',
      [mailer_id],
    );
    expect(rows[0]).toEqual({ callback_password_digest: null, secret: null });
  });
});

describe('sending through SparkPost', () => {
  it('sends one transmission per copy with our MIME and metadata; the log stays QUEUED', async () => {
    const dkim = dkimKeyPair();
    await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
      domain: 'signed.sp.test',
      selector: 'sp',
      key: dkim,
    });
    const key = sparkpost.newKey();
    const { mailer_id } = await createMailer(key);
    const refId = await send(mailer_id, {
      to: [{ email: 'ann@example.com' }],
      cc: [{ email: 'cc@example.com' }],
      bcc: [{ email: 'hidden@example.com' }],
      campaign_id: 'spring',
    });
    const [t] = await eventually(() => {
      const found = transmissionsOf(refId);
      return found.length > 0 && found;
    }, 'the transmission');
    expect(t!.apiKey).toBe(key);
    expect([...t!.recipients].sort()).toEqual(['ann@example.com', 'cc@example.com', 'hidden@example.com']);
    expect(t!.metadata).toEqual({ ref_id: refId, copy_id: expect.any(String) });
    expect(t!.options).toEqual({ open_tracking: false, click_tracking: false, transactional: true });
    expect(t!.campaignId).toBe('spring');
    const headers = messageHeaders(t!.rfc822);
    expect(headers['message-id']).toMatch(new RegExp(`^<svc_mailer_${refId}\\.`));
    expect(headers.to).toContain('ann@example.com');
    expect(headers.cc).toContain('cc@example.com');
    expect(headers.bcc).toBeUndefined();
    expect(t!.rfc822.toString('utf8')).not.toContain('hidden@example.com');
    const verified = await dkimVerify(t!.rfc822, {
      resolver: async (name: string, type: string) => {
        if (type === 'TXT' && name === 'sp._domainkey.signed.sp.test') return [[dkim.txt]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    expect(verified.results[0]?.status?.result).toBe('pass');

    // Accepted, not delivered: recorded on the log rows, no event, status QUEUED.
    await eventually(async () => {
      const { rows } = await ctx.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM email_logs WHERE ref_id = $1 AND provider_transmission_id = $2',
        [refId, t!.id],
      );
      return Number(rows[0]!.n) === 3;
    }, 'the acceptance recorded');
    const logs = await request(app).get('/v1/email/logs').query({ refId }).set(auth).expect(200);
    expect(logs.body.data.map((r: { status: string }) => r.status)).toEqual(['QUEUED', 'QUEUED', 'QUEUED']);
    expect(await eventsOf(refId)).toEqual([]);
    expect(transmissionsOf(refId)).toHaveLength(1);
  });

  it('never sends an accepted copy again: a redelivered command is skipped, recovery skips it', async () => {
    const { mailer_id } = await createMailer(sparkpost.newKey());
    const refId = await send(mailer_id, { subject: 'accepted once' });
    const [t] = await eventually(() => {
      const found = transmissionsOf(refId);
      return found.length > 0 && found;
    }, 'the transmission');
    const copyId = String(t!.metadata?.copy_id);
    await eventually(async () => {
      const { rows } = await ctx.db.query(
        'SELECT 1 FROM email_logs WHERE copy_id = $1 AND provider_accepted_at IS NOT NULL',
        [copyId],
      );
      return rows.length === 1;
    }, 'the acceptance recorded');
    expect((await findUnfinishedCopies(ctx.db)).map((c) => c.copy_id)).not.toContain(copyId);

    const before = await skipped();
    const { name, version } = BusMessages.sendEmail;
    const cmd = commandOfOneCopy({ tenant_id: tenantId, ref_id: refId, copy_id: copyId, attempt: 1 });
    await ctx.bus.publishDelayed(Queue.send, envelope(name, cmd, { version, tenantId }), 0);
    await eventually(async () => (await skipped()) > before, 'the redelivered command skipped');
    expect(transmissionsOf(refId)).toHaveLength(1);
    expect(await eventsOf(refId)).toEqual([]);
  });

  it('sends a message without a verified From domain unsigned', async () => {
    const { mailer_id } = await createMailer(sparkpost.newKey());
    const refId = await send(mailer_id, { from: { email: 'hello@unsigned.sp.test' } });
    const [t] = await eventually(() => {
      const found = transmissionsOf(refId);
      return found.length > 0 && found;
    }, 'the transmission');
    expect(messageHeaders(t!.rfc822)['dkim-signature']).toBeUndefined();
  });

  it('retries a 503 as a failed attempt, then is accepted', async () => {
    const { mailer_id } = await createMailer(sparkpost.newKey());
    sparkpost.fail({
      status: 503,
      body: sparkpost.error('Service Unavailable'),
      match: (r) =>
        r.body.toString('utf8').includes('"subject-503"') || r.body.toString('utf8').includes('503 then'),
    });
    const refId = await send(mailer_id, { subject: '503 then success' });
    await eventually(() => transmissionsOf(refId).length === 1, 'accepted on the second attempt');
    expect(requestsOf(refId)).toHaveLength(2);
    const events = await eventsOf(refId);
    expect(events).toEqual([
      expect.objectContaining({
        event: 'SMTP_ERROR',
        attempt: 1,
        details: expect.objectContaining({
          retry_scheduled: true,
          failed_reason: 'Temporary failure: SparkPost is unavailable',
          provider_error: 'SparkPost 503: Service Unavailable',
        }),
      }),
    ]);
  });

  it('ends a copy SparkPost refuses (400) with a final SMTP_ERROR carrying SparkPost’s message', async () => {
    const { mailer_id } = await createMailer(sparkpost.newKey());
    sparkpost.fail({
      status: 400,
      body: sparkpost.error('Invalid data', '1902', 'Message generation rejected'),
      match: (r) => r.body.toString('utf8').includes('refused by SparkPost'),
    });
    const refId = await send(mailer_id, { subject: 'refused by SparkPost' });
    const [event] = await eventually(async () => {
      const found = await eventsOf(refId);
      return found.length > 0 && found;
    }, 'the SMTP_ERROR');
    expect(event).toMatchObject({
      event: 'SMTP_ERROR',
      details: {
        retry_scheduled: false,
        failed_reason: 'SparkPost refused the message as invalid',
        provider_error: 'SparkPost 400: Invalid data: Message generation rejected',
      },
    });
    expect(transmissionsOf(refId)).toHaveLength(0);
    expect(requestsOf(refId)).toHaveLength(1);
  });

  it('deactivates the mailer when SparkPost refuses its key (401); a new key re-activates it', async () => {
    // MAILER_DEACTIVATED as published on the bus (each message once: redeliveries are dropped).
    const deactivations: Array<{ event: string; details: Record<string, unknown> }> = [];
    const seen = new Set<string>();
    const consumer = await ctx.bus.consume(
      {
        queue: `test.sparkpost-deactivated.${ulid()}`,
        bindings: [{ exchange: Exchange.events, routingKey: RoutingKey.mailerDeactivated }],
      },
      async (d) => {
        if (seen.has(d.envelope.id)) return;
        seen.add(d.envelope.id);
        deactivations.push(d.envelope.payload as (typeof deactivations)[number]);
      },
    );
    afterAllCleanups.push(() => consumer.cancel());
    const key = sparkpost.newKey();
    const { mailer_id } = await createMailer(key);
    sparkpost.revoke(key);
    const refId = await send(mailer_id, { subject: 'revoked key' });
    const [event] = await eventually(async () => {
      const found = await eventsOf(refId);
      return found.length > 0 && found;
    }, 'the SMTP_ERROR');
    expect(event).toMatchObject({
      event: 'SMTP_ERROR',
      details: {
        retry_scheduled: false,
        failed_reason: expect.stringMatching(
          /^Authentication failed: SparkPost refused the mailer's access \(401\)/,
        ),
        provider_error: 'SparkPost 401: Unauthorized.',
      },
    });
    const got = await eventually(async () => {
      const res = await request(app).get(`/v1/mailer/${mailer_id}`).set(auth).expect(200);
      return res.body.data.state === 'deactivated' && res.body.data;
    }, 'the mailer deactivated');
    expect(got.state_reason).toBe('provider_auth_error');
    const events = await eventually(() => {
      const found = deactivations.filter((e) => e.details.mailer_id === mailer_id);
      return found.length > 0 && found;
    }, 'MAILER_DEACTIVATED on the bus');
    expect(events).toEqual([
      {
        event: 'MAILER_DEACTIVATED',
        success: false,
        details: expect.objectContaining({
          mailer_id,
          config_type: 'sparkpost',
          failed_reason: 'provider_auth_error',
          provider_error: 'SparkPost 401: Unauthorized.',
        }),
      },
    ]);
    await send(mailer_id, { subject: 'after deactivation' }, 422);
    const enable = await request(app).post(`/v1/mailer/${mailer_id}/enable`).set(auth).expect(422);
    expect(enable.body.error).toBe(
      'A SparkPost mailer is re-activated by updating its api_key through PUT /v1/mailer/sparkpost',
    );

    const fresh = sparkpost.newKey();
    await request(app)
      .put('/v1/mailer/sparkpost')
      .set(auth)
      .send({ mailer_id, config: { api_key: fresh } })
      .expect(200);
    const again = await request(app).get(`/v1/mailer/${mailer_id}`).set(auth).expect(200);
    expect(again.body.data.state).toBe('active');
    const next = await send(mailer_id, { subject: 'with the new key' });
    const [t] = await eventually(() => {
      const found = transmissionsOf(next);
      return found.length > 0 && found;
    }, 'sent with the new key');
    expect(t!.apiKey).toBe(fresh);
  });
});
