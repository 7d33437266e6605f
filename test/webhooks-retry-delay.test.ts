/**
 * The webhook worker waits the retry delay between attempts (WEBHOOK_RETRY_DELAYS, each scaled
 * by a jitter factor of at least 1 - JITTER). No timed assertion: the evidence is what the
 * dispatcher wrote and what a real receiver saw, compared with lower bounds only:
 * - while the second attempt is held open by the receiver, the stored row still carries the due
 *   time the first attempt's outcome scheduled: at least 0.8 x delay after the first attempt, and
 *   the second request did not arrive before it;
 * - the recorded attempts, and the requests' arrival times at the receiver, are each at least
 *   0.8 x that retry's delay apart.
 * A worker that retried at once (or ignored next_attempt_at) would show gaps of one poll (50 ms).
 */
import { IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import { createTenant, webhookDeliveries, webhooks } from '@mailyard/store';
import { at, emailEvent, eventually, publishEmailEvent } from '@mailyard/testkit/webhooks';
import { JITTER } from '../services/webhook-dispatcher/src/schedule';
import { useDispatcherStack } from './support/dispatcher-stack';

jest.setTimeout(90_000);

const DELAYS_S = [1, 2];

const stack = useDispatcherStack('webhooks-delay-test', {
  WEBHOOK_RETRY_DELAYS: DELAYS_S.join(','),
  // Polled far more often than the delays: a worker that did not wait would retry within 50 ms.
  WEBHOOK_POLL_MS: '50',
});

it('waits at least the (jittered) retry delay before each retry', async () => {
  const { ctx, receiver } = stack;
  const t = await createTenant(ctx.db, { name: 'delay', tier: 'standard' });
  const path = '/delay';
  await webhooks.create(ctx.db, t.id, {
    id: newId(IdPrefix.emailEventsWebhook),
    event: 'EMAIL_EVENT',
    url: receiver.url(path),
    events: Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((x) => [x, true])) as never,
    headerNames: [],
    headersSealed: null,
    secretSealed: ctx.sealer.seal('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
  });
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  // 500, then a 500 held open until the test has read the row, then 200.
  receiver.reply((req, n) =>
    req.path !== path
      ? { status: 200 }
      : n === 0
        ? { status: 500 }
        : n === 1
          ? { status: 500, hold: held }
          : { status: 200 },
  );
  try {
    await publishEmailEvent(ctx.bus, t.id, emailEvent('MAIL_DELIVERED', at(1)));
    await eventually(() => receiver.to(path).length === 2, 'the second attempt, held open');
    // The row as the first attempt's outcome left it: its due time is what the worker waited for.
    const { rows } = await ctx.db.query<{ next_attempt_at: Date; first_at: Date; attempts: number }>(
      `SELECT d.next_attempt_at, a.at AS first_at, d.attempts FROM webhook_deliveries d
         JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.attempt = 1
        WHERE d.tenant_id = $1`,
      [t.id],
    );
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.attempts).toBe(1);
    const minFirst = DELAYS_S[0]! * 1000 * (1 - JITTER);
    expect(row.next_attempt_at.getTime() - row.first_at.getTime()).toBeGreaterThanOrEqual(minFirst);
    const [first, second] = receiver.to(path);
    expect(second!.receivedAt).toBeGreaterThanOrEqual(row.next_attempt_at.getTime());
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(minFirst);
  } finally {
    release();
  }
  const delivered = await eventually(async () => {
    const page = await webhookDeliveries.list(ctx.db, t.id, { pageSize: 10, status: 'delivered' });
    return page.items[0];
  }, 'delivered on the third attempt');
  expect(delivered.attempts.map((a) => a.status_code)).toEqual([500, 500, 200]);
  const attemptsAt = delivered.attempts.map((a) => Date.parse(a.at));
  const arrived = receiver.to(path).map((r) => r.receivedAt);
  expect(arrived).toHaveLength(3);
  for (let i = 0; i < DELAYS_S.length; i++) {
    const min = DELAYS_S[i]! * 1000 * (1 - JITTER);
    expect({ retry: i + 1, recorded: attemptsAt[i + 1]! - attemptsAt[i]! >= min }).toEqual({
      retry: i + 1,
      recorded: true,
    });
    expect({ retry: i + 1, arrived: arrived[i + 1]! - arrived[i]! >= min }).toEqual({
      retry: i + 1,
      arrived: true,
    });
  }
  // One delivery: the same webhook-id on every attempt.
  expect(new Set(receiver.to(path).map((r) => r.headers['webhook-id'])).size).toBe(1);
});
