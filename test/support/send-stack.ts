/**
 * The send path on the real servers, for cross-service tests: private stores, Postfix's
 * smtp-sink as the relay, one service context with the test settings (fast outbox polling, no
 * API-key cache, `env` on top), the send service, and the gateway app (supertest drives it
 * in-process; the send service's outbox relay publishes the gateway's command rows too).
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
  const config = configFrom({
    ...stores.env,
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    API_KEY_CACHE_MS: '0',
    SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
    ...env,
  });
  const ctx = await openContext(config, createLogger(name, 'error'));
  const send = await startSend(ctx);
  const app = buildGatewayApp(ctx);
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
      await send.stop();
      await closeContext(ctx);
      await sink.stop();
      await stores.drop();
    },
  };
}
