/**
 * The webhook dispatcher on the real servers for one test file: fresh stores, a webhook receiver
 * on 127.0.0.1 (`WEBHOOK_ALLOW_INSECURE=1`), a context with `env` over the defaults below, the
 * dispatcher started on it (with `relay: true` also an outbox relay, for tests that write outbox
 * rows through the store with no send service to publish them), and the gateway app over the
 * same context for the API calls.
 * `useDispatcherStack` registers the beforeAll/afterAll; read its fields inside hooks and tests.
 */
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type OutboxRelay,
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
  startOutboxRelay,
} from '@mailyard/platform';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

export interface DispatcherStack {
  ctx: ServiceContext;
  receiver: WebhookReceiver;
  app: ReturnType<typeof buildGatewayApp>;
}

export function useDispatcherStack(
  name: string,
  env: Record<string, string>,
  opts: { relay?: boolean } = {},
): DispatcherStack {
  let stores: SharedStores | undefined;
  let dispatcher: RunningService | undefined;
  let relay: OutboxRelay | undefined;
  const stack = {} as DispatcherStack;
  beforeAll(async () => {
    stores = await createSharedStores('servers');
    stack.receiver = await startWebhookReceiver();
    const config = configFrom({
      ...stores.env,
      LOG_LEVEL: 'error',
      API_KEY_CACHE_MS: '0',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_BATCH_WAIT_MS: '50',
      WEBHOOK_TIMEOUT_MS: '10000',
      ...env,
    });
    stack.ctx = await openContext(config, createLogger(name, process.env.TEST_LOG_LEVEL ?? 'error'));
    dispatcher = await startDispatcher(stack.ctx);
    if (opts.relay) relay = startOutboxRelay(stack.ctx);
    stack.app = buildGatewayApp(stack.ctx);
  });
  afterAll(async () => {
    await relay?.stop();
    await dispatcher?.stop();
    if (stack.ctx) await closeContext(stack.ctx);
    await stack.receiver?.close();
    await stores?.drop();
  });
  return stack;
}
