/**
 * Replay amplification (issue 23 item 5), on the real servers: POST
 * /v1/webhook/deliveries/{id}/replay used to copy the stored body into every replay (30 replays
 * of a 7 MB delivery grew the database by 420 MB). Replays now share the original's body
 * (webhook_deliveries.body_of, migration 0026) and are limited per delivery (a replay of a
 * replay counts against the same budget): WEBHOOK_REPLAY_LIMIT per WEBHOOK_REPLAY_WINDOW_SECONDS,
 * 429 past it. What receivers see is unchanged: the same body, a new webhook-id, `replay_of`.
 */
import { randomBytes } from 'node:crypto';
import { WebhookErrorText } from '@mailyard/contracts';
import { createTenant, insertDeliveries } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/webhooks';
import request from 'supertest';
import { useDispatcherStack } from './support/dispatcher-stack';

jest.setTimeout(120_000);

const LIMIT = 12;
const WINDOW_S = 3600;

const stack = useDispatcherStack('webhooks-replay-test', {
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_REPLAY_LIMIT: String(LIMIT),
  WEBHOOK_REPLAY_WINDOW_SECONDS: String(WINDOW_S),
});

let seq = 0;
/** A tenant with an EMAIL_EVENT webhook at its own path, and one stored delivery of `body` to it. */
async function deliveryOf(body: string) {
  const { ctx, app, receiver } = stack;
  const t = await createTenant(ctx.db, { name: `replay-${++seq}`, tier: 'enterprise' });
  const path = `/replay-${seq}`;
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const reg = await request(app)
    .post('/v1/webhook/register')
    .set(as(t.apiKey))
    .send({
      webhook_url: receiver.url(path),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: { events: { delivery: true } },
    })
    .expect(201);
  const [id] = await insertDeliveries(ctx.db, [
    {
      tenantId: t.id,
      targetKind: 'webhook',
      webhookId: reg.body.webhook_id,
      eventTypes: ['MAIL_DELIVERED'],
      body,
    },
  ]);
  await eventually(() => receiver.deliveries(path).length === 1, 'the original delivered');
  const replay = (of: string, key = t.apiKey) =>
    request(app).post(`/v1/webhook/deliveries/${of}/replay`).set(as(key)).send({});
  return { tenantId: t.id, key: t.apiKey, path, id: id!, replay };
}

const tableBytes = async () =>
  Number(
    (await stack.ctx.db.query<{ n: string }>("SELECT pg_total_relation_size('webhook_deliveries') AS n"))
      .rows[0]!.n,
  );

it('many replays of a large delivery share its stored body: the table does not grow with them', async () => {
  const { ctx, app, receiver } = stack;
  // 2 MB that does not compress (TOAST would otherwise hide copies).
  const body = JSON.stringify([
    { event: 'MAIL_DELIVERED', details: { blob: randomBytes(1_500_000).toString('base64') } },
  ]);
  const d = await deliveryOf(body);
  const before = await tableBytes();

  // Replays of the original and of replays (a chain), as a user clicking "replay" would.
  const ids: string[] = [];
  for (let i = 0; i < LIMIT; i++) {
    const of = i % 2 === 0 || ids.length === 0 ? d.id : ids[ids.length - 1]!;
    const res = await d.replay(of).expect(201);
    expect(res.body).toEqual({
      success: true,
      message: 'Delivery queued for replay',
      delivery_id: expect.any(String),
    });
    ids.push(res.body.delivery_id);
  }
  await eventually(() => receiver.deliveries(d.path).length === LIMIT + 1, 'every replay delivered');

  // Receivers see what they saw before: the same body under a new webhook-id each time.
  const got = receiver.deliveries(d.path);
  expect(got.every((r) => r.body === body)).toBe(true);
  expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([d.id, ...ids]));
  const view = await request(app)
    .get(`/v1/webhook/deliveries/${ids[1]}`)
    .set({ Authorization: `Bearer ${d.key}` })
    .expect(200);
  expect(view.body.data).toMatchObject({
    replay_of: ids[0],
    status: 'delivered',
    event_types: ['MAIL_DELIVERED'],
  });

  // One stored body for the thirteen deliveries; every replay names it.
  const { rows } = await ctx.db.query<{
    bodies: number;
    body_bytes: number;
    replays: number;
    sharing: number;
  }>(
    `SELECT count(*) FILTER (WHERE body IS NOT NULL)::int AS bodies,
            coalesce(sum(octet_length(body)), 0)::int AS body_bytes,
            count(*) FILTER (WHERE replay_of IS NOT NULL)::int AS replays,
            count(*) FILTER (WHERE body_of = $2)::int AS sharing
       FROM webhook_deliveries WHERE tenant_id = $1`,
    [d.tenantId, d.id],
  );
  expect(rows[0]).toEqual({ bodies: 1, body_bytes: Buffer.byteLength(body), replays: LIMIT, sharing: LIMIT });
  // Copying the body would have grown the table by LIMIT bodies (24 MB); sharing it, by small rows.
  const grown = (await tableBytes()) - before;
  expect(grown).toBeLessThan(Buffer.byteLength(body));
});

it('replays of one delivery are limited per window (its replays count too): 429 with the envelope and Retry-After', async () => {
  const { ctx } = stack;
  const d = await deliveryOf('[{"event":"MAIL_DELIVERED","details":{}}]');
  const other = await deliveryOf('[{"event":"MAIL_DELIVERED","details":{"n":2}}]');
  // Replay until refused; a fixed window may start anew once in between, so at most 2 x LIMIT pass.
  const accepted: string[] = [];
  let refused: request.Response | undefined;
  for (let i = 0; i <= 2 * LIMIT && !refused; i++) {
    const of = accepted.length > 0 && i % 3 === 0 ? accepted[accepted.length - 1]! : d.id;
    const res = await d.replay(of);
    if (res.status === 201) accepted.push(res.body.delivery_id);
    else refused = res;
  }
  expect(refused?.status).toBe(429);
  expect(accepted.length).toBeGreaterThanOrEqual(LIMIT);
  expect(accepted.length).toBeLessThanOrEqual(2 * LIMIT);
  expect(refused!.body).toEqual({ success: false, error: WebhookErrorText.replayLimited(LIMIT, WINDOW_S) });
  expect(refused!.body.error).toBe(
    `Replay limit exceeded: a delivery may be replayed at most ${LIMIT} times per ${WINDOW_S} s`,
  );
  const retryAfter = Number(refused!.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_S);
  // A replay of one of its replays shares the budget; another delivery has its own.
  expect((await d.replay(accepted[0]!)).status).toBe(429);
  expect((await other.replay(other.id)).status).toBe(201);
  // Refused replays stored nothing; another tenant's id is still a 404, not a 429.
  const { rows } = await ctx.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND replay_of IS NOT NULL',
    [d.tenantId],
  );
  expect(rows[0]!.n).toBe(accepted.length);
  expect((await d.replay(other.id)).status).toBe(404);
  expect((await other.replay(d.id, other.key)).status).toBe(404);
});
