/**
 * Without WEBHOOK_ALLOW_INSECURE the dispatcher never connects to a private, loopback,
 * link-local or metadata address, whether the URL names it or a host name resolves to it
 * (webhooks stored directly: the register check would refuse them too). Real servers.
 */
import { IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant, webhookDeliveries, webhooks } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import { at, emailEvent, eventually, publishEmailEvent } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

jest.setTimeout(90_000);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let dispatcher: RunningService;

beforeAll(async () => {
  stores = await createSharedStores('servers');
  receiver = await startWebhookReceiver();
  const config = configFrom({
    ...stores.env,
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOW_INSECURE: '0',
    WEBHOOK_BATCH_WAIT_MS: '50',
    WEBHOOK_RETRY_DELAYS: '0.1',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  ctx = await openContext(config, createLogger('webhooks-guard-test', process.env.TEST_LOG_LEVEL ?? 'error'));
  dispatcher = await startDispatcher(ctx);
});

afterAll(async () => {
  await dispatcher?.stop();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
});

const allOn = Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, true])) as never;

it.each([
  ['loopback IP', (r: WebhookReceiver) => `http://127.0.0.1:${r.port}/guard-1`, '/guard-1'],
  ['a name resolving to loopback', (r: WebhookReceiver) => `http://localhost:${r.port}/guard-2`, '/guard-2'],
  ['private 10/8', () => 'http://10.0.0.1/guard-3', '/guard-3'],
  ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data', '/latest/meta-data'],
])('%s: never connected to; attempts say why; dropped after the window', async (_what, url, path) => {
  const t = await createTenant(ctx.db, { name: 'guard', tier: 'standard' });
  await webhooks.create(ctx.db, t.id, {
    id: newId(IdPrefix.emailEventsWebhook),
    event: 'EMAIL_EVENT',
    url: url(receiver),
    events: allOn,
    headerNames: [],
    headersSealed: null,
    secretSealed: ctx.sealer.seal('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
  });
  await publishEmailEvent(ctx.bus, t.id, emailEvent('MAIL_DELIVERED', at(1)));
  const dropped = await eventually(async () => {
    const page = await webhookDeliveries.list(ctx.db, t.id, { pageSize: 10, status: 'dropped' });
    return page.items[0];
  }, 'dropped delivery');
  expect(dropped.attempts).toHaveLength(2);
  for (const a of dropped.attempts) {
    expect(a.status_code).toBeNull();
    expect(a.error).toBe('target resolves to a private, loopback or link-local address');
  }
  expect(receiver.to(path)).toHaveLength(0);
});
