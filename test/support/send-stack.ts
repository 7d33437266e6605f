/**
 * The send path on the real servers, for cross-service tests: private stores, Postfix's
 * smtp-sink as the relay, one service context with the test settings (fast outbox polling, no
 * API-key cache, `env` on top), the send service, and the gateway app (supertest drives it
 * in-process; the send service's outbox relay publishes the gateway's command rows too).
 * Below it, `startOnContext`: one context opened from a test's own settings with the services it
 * names (send, tracking, submission, ...) and the gateway app on it, stopped as one unit — what
 * the cross-service tests that bring their own receiver or servers build their set-up from.
 */
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { type SmtpSink, startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type Stores, createStores } from '@mailyard/testkit/stores';

/** The settings every cross-service test starts from: quiet logs, fast outbox polling, no API-key cache. */
export const TEST_SETTINGS = { LOG_LEVEL: 'error', OUTBOX_POLL_MS: '50', API_KEY_CACHE_MS: '0' } as const;

export interface OnContext {
  ctx: ServiceContext;
  /** The started services, in the order they were named. */
  services: RunningService[];
  /** The gateway app on `ctx`, built when first read (a test that drives no API builds none). */
  readonly app: ReturnType<typeof buildGatewayApp>;
  /** Stops the services in reverse order, then closes the context. */
  stop(): Promise<void>;
}

/**
 * Opens one context from `env` exactly (nothing added: spread TEST_SETTINGS in to use them) and
 * starts `starts` on it in order; a start that fails stops the ones before it and closes the
 * context, then rethrows.
 */
export async function startOnContext(
  name: string,
  env: Record<string, string>,
  starts: Array<(ctx: ServiceContext) => Promise<RunningService>>,
): Promise<OnContext> {
  const ctx = await openContext(configFrom(env), createLogger(name, 'error'));
  const services: RunningService[] = [];
  const stop = async () => {
    for (const s of [...services].reverse()) await s.stop();
    await closeContext(ctx);
  };
  try {
    for (const start of starts) services.push(await start(ctx));
  } catch (err) {
    await stop();
    throw err;
  }
  let app: ReturnType<typeof buildGatewayApp> | undefined;
  return {
    ctx,
    services,
    get app() {
      app ??= buildGatewayApp(ctx);
      return app;
    },
    stop,
  };
}

export interface SendStack {
  stores: Stores;
  sink: SmtpSink;
  ctx: ServiceContext;
  send: RunningService;
  app: ReturnType<typeof buildGatewayApp>;
  /** Envelope recipients the sink received, by address (how many messages each). */
  received(): Map<string, number>;
  /** Stops the send service, closes the context, the sink and drops the stores. */
  stop(): Promise<void>;
}

export async function startSendStack(name: string, env: Record<string, string> = {}): Promise<SendStack> {
  const stores = await createStores();
  const sink = await startSmtpSink({ dump: true });
  const on = await startOnContext(
    name,
    {
      ...stores.env,
      ...TEST_SETTINGS,
      SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
      ...env,
    },
    [startSend],
  );
  const { ctx, app } = on;
  const send = on.services[0]!;
  return {
    stores,
    sink,
    ctx,
    send,
    app,
    received() {
      const count = new Map<string, number>();
      for (const m of sink.messages()) for (const to of m.to) count.set(to, (count.get(to) ?? 0) + 1);
      return count;
    },
    async stop() {
      await on.stop();
      await sink.stop();
      await stores.drop();
    },
  };
}
