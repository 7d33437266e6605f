/**
 * Scheduled sends end to end (docs/api/send.md "Scheduled sends"): POST /v1/email/send with a
 * `send_at` through the gateway app, the send service's leased release, the outbox relay and the
 * send service delivering to a real SMTP receiver (smtp-server), read back through
 * GET /v1/email/logs. On the real servers: SCHEDULED then delivered (not before send_at), cancel
 * (200, then 409; 404 for another tenant or an unknown ref_id; an immediate send cannot be
 * cancelled), a cancelled send never delivered after its time passed, the 400s of send_at, and a
 * held send surviving a restart of the gateway and send service (the servers stay up). On the
 * embedded defaults (PGlite, in-process bus and kv): a scheduled send is released, and cancelled, too.
 */
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { insertSmtpMailer } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import request from 'supertest';
import { type OnContext, TEST_SETTINGS, startOnContext } from './support/send-stack';

jest.setTimeout(120_000);

type Services = OnContext;

/** The gateway app and the send service on one context, as a restartable unit. */
const startServices = (env: Record<string, string>): Promise<Services> =>
  startOnContext('scheduled-test', { ...env, ...TEST_SETTINGS, MAILER_ALLOW_PRIVATE_HOSTS: '1' }, [
    startSend,
  ]);

interface Tenant {
  auth: { Authorization: string };
  mailerId: string;
}

async function newTenant(s: Services, receiver: SmtpReceiver): Promise<Tenant> {
  const t = await createTenant(s.ctx.db, {
    name: `t-${Math.random().toString(36).slice(2, 8)}`,
    tier: 'enterprise',
  });
  const mailerId = await insertSmtpMailer(s.ctx.db, s.ctx.sealer, t.id, { port: receiver.port });
  return { auth: { Authorization: `Bearer ${t.apiKey}` }, mailerId };
}

const payload = (t: Tenant, to: string[], extra: Record<string, unknown> = {}) => ({
  from: { email: 'news@sender.example' },
  to: to.map((email) => ({ email })),
  mailer_id: t.mailerId,
  subject: 'Scheduled',
  content: [{ type: 'text/plain', value: 'hello later' }],
  ...extra,
});

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

async function logsOf(s: Services, t: Tenant, refId: string) {
  const res = await request(s.app).get('/v1/email/logs').query({ refId }).set(t.auth).expect(200);
  return res.body.data as Array<{ recipient: string; status: string; delivered_at: string | null }>;
}

const receivedBy = (receiver: SmtpReceiver, email: string) =>
  receiver.messages.filter((m) => m.to.includes(email)).length;

async function deliveredLogs(s: Services, t: Tenant, refId: string, n = 1) {
  return eventually(async () => {
    const rows = await logsOf(s, t, refId);
    return rows.length === n && rows.every((r) => r.status === 'MAIL_DELIVERED') ? rows : null;
  }, `send ${refId} delivered`);
}

describe('on the real servers', () => {
  let stores: Stores;
  let receiver: SmtpReceiver;
  let s: Services;
  let tenant: Tenant;

  beforeAll(async () => {
    stores = await createStores();
    receiver = await startSmtpReceiver();
    s = await startServices(stores.env);
    tenant = await newTenant(s, receiver);
  });

  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
    await stores?.drop();
  });

  it('shows a send scheduled a few seconds ahead as SCHEDULED, then delivers it, not before send_at', async () => {
    const sendAt = inMs(2500);
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['soon@example.com'], { send_at: sendAt }))
      .expect(200);
    expect(res.body).toEqual({ success: true, ref_id: expect.any(String), message: 'scheduled' });
    const refId: string = res.body.ref_id;
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['SCHEDULED']);
    const filtered = await request(s.app)
      .get('/v1/email/logs')
      .query({ status: 'SCHEDULED' })
      .set(tenant.auth)
      .expect(200);
    expect(filtered.body.data.map((r: { ref_id: string }) => r.ref_id)).toContain(refId);

    const [row] = await deliveredLogs(s, tenant, refId);
    expect(Date.parse(row!.delivered_at!)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(receivedBy(receiver, 'soon@example.com')).toBe(1);
  });

  it('cancels a scheduled send: its copies are CANCELLED and never delivered, even after send_at', async () => {
    const cancelled = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['gone1@example.com', 'gone2@example.com'], { send_at: inMs(2500) }))
      .expect(200);
    const refId: string = cancelled.body.ref_id;
    // Released after the cancelled one's time: once it is delivered, that time has passed.
    const later = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['later@example.com'], { send_at: inMs(3500) }))
      .expect(200);

    const other = await newTenant(s, receiver);
    const foreign = await request(s.app).post(`/v1/email/send/${refId}/cancel`).set(other.auth).expect(404);
    expect(foreign.body).toMatchObject({ success: false, error: 'Send not found' });
    await request(s.app)
      .post('/v1/email/send/01JD5K7ZQ3X0V8Y2N4M6P8R0TF/cancel')
      .set(tenant.auth)
      .expect(404);

    const res = await request(s.app).post(`/v1/email/send/${refId}/cancel`).set(tenant.auth).expect(200);
    expect(res.body).toEqual({ success: true, message: 'Send cancelled', cancelled: 2 });
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['CANCELLED', 'CANCELLED']);
    const again = await request(s.app).post(`/v1/email/send/${refId}/cancel`).set(tenant.auth).expect(409);
    expect(again.body.success).toBe(false);
    expect(again.body.error).toMatch(/^Nothing left to cancel/);

    await deliveredLogs(s, tenant, later.body.ref_id);
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(receivedBy(receiver, 'gone1@example.com')).toBe(0);
    expect(receivedBy(receiver, 'gone2@example.com')).toBe(0);
  });

  it('lets a send-scope key schedule and cancel, and records the cancel in the audit log', async () => {
    const created = await request(s.app)
      .post('/v1/keys')
      .set(tenant.auth)
      .send({ name: 'app', scope: 'send' })
      .expect(201);
    const sendKey = { Authorization: `Bearer ${created.body.api_key}` };
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(sendKey)
      .send(payload(tenant, ['scoped@example.com'], { send_at: inMs(3_600_000) }))
      .expect(200);
    const refId: string = res.body.ref_id;
    await request(s.app).post(`/v1/email/send/${refId}/cancel`).set(sendKey).expect(200);
    const audit = await eventually(async () => {
      const list = await request(s.app)
        .get('/v1/audit')
        .query({ action: 'cancel' })
        .set(tenant.auth)
        .expect(200);
      return list.body.data.find((e: { resource_id: string }) => e.resource_id === refId);
    }, 'the cancel in the audit log');
    expect(audit).toMatchObject({ action: 'cancel', resource: 'email', key_id: created.body.key_id });
  });

  it('replays a scheduled send with the same Idempotency-Key: one send, still scheduled', async () => {
    const body = payload(tenant, ['once@example.com'], { send_at: inMs(3_600_000) });
    const first = await request(s.app)
      .post('/v1/email/send')
      .set({ ...tenant.auth, 'Idempotency-Key': 'scheduled-once' })
      .send(body)
      .expect(200);
    const again = await request(s.app)
      .post('/v1/email/send')
      .set({ ...tenant.auth, 'Idempotency-Key': 'scheduled-once' })
      .send(body)
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ success: true, ref_id: first.body.ref_id, message: 'scheduled' });
    expect((await logsOf(s, tenant, first.body.ref_id)).map((r) => r.status)).toEqual(['SCHEDULED']);
  });

  it('answers 409 to the cancel of a send that is not scheduled (immediate, or send_at past)', async () => {
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['now@example.com'], { send_at: '2020-01-01T00:00:00Z' }))
      .expect(200);
    expect(res.body.message).toBe('queued');
    await request(s.app).post(`/v1/email/send/${res.body.ref_id}/cancel`).set(tenant.auth).expect(409);
    await deliveredLogs(s, tenant, res.body.ref_id);
  });

  it.each([
    [
      'tomorrow',
      'send_at must be an RFC 3339 date-time with a time zone offset, such as 2026-03-01T09:30:00Z',
    ],
    [
      '2026-03-01T09:30:00',
      'send_at must be an RFC 3339 date-time with a time zone offset, such as 2026-03-01T09:30:00Z',
    ],
    [
      '2026-02-30T09:30:00Z',
      'send_at must be an RFC 3339 date-time with a time zone offset, such as 2026-03-01T09:30:00Z',
    ],
    [1767225600, 'send_at must be a string'],
    [inMs(8 * 24 * 3600 * 1000), 'send_at must be at most 7 days ahead'],
  ])('answers 400 to send_at %p', async (sendAt, message) => {
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['bad@example.com'], { send_at: sendAt }))
      .expect(400);
    expect(res.body).toMatchObject({ success: false, error: message });
  });

  it('keeps a scheduled send across a restart of the gateway and send service, then delivers it', async () => {
    const sendAt = inMs(6000);
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['restart@example.com'], { send_at: sendAt }))
      .expect(200);
    const refId: string = res.body.ref_id;
    await s.stop();
    s = await startServices(stores.env);
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['SCHEDULED']);
    const [row] = await deliveredLogs(s, tenant, refId);
    expect(Date.parse(row!.delivered_at!)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(receivedBy(receiver, 'restart@example.com')).toBe(1);
  });
});

describe('on the embedded defaults', () => {
  let receiver: SmtpReceiver;
  let s: Services;

  beforeAll(async () => {
    receiver = await startSmtpReceiver();
    s = await startServices({
      DATABASE_URL: '',
      AMQP_URL: '',
      REDIS_URL: '',
      DATA_DIR: 'memory://',
      SECRET_KEY: '5c'.repeat(32),
    });
  });

  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
  });

  it('releases a scheduled send', async () => {
    const tenant = await newTenant(s, receiver);
    const sendAt = inMs(2000);
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['embedded@example.com'], { send_at: sendAt }))
      .expect(200);
    const refId: string = res.body.ref_id;
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['SCHEDULED']);
    const [row] = await deliveredLogs(s, tenant, refId);
    expect(Date.parse(row!.delivered_at!)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(receivedBy(receiver, 'embedded@example.com')).toBe(1);
  });

  it('cancels a scheduled send', async () => {
    const tenant = await newTenant(s, receiver);
    const res = await request(s.app)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send(payload(tenant, ['embedded-gone@example.com'], { send_at: inMs(3_600_000) }))
      .expect(200);
    const refId: string = res.body.ref_id;
    const cancelled = await request(s.app)
      .post(`/v1/email/send/${refId}/cancel`)
      .set(tenant.auth)
      .expect(200);
    expect(cancelled.body.cancelled).toBe(1);
    await request(s.app).post(`/v1/email/send/${refId}/cancel`).set(tenant.auth).expect(409);
    expect((await logsOf(s, tenant, refId)).map((r) => r.status)).toEqual(['CANCELLED']);
  });
});
