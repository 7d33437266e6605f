import { type EmailEvent, Exchange, decodeEmailEventMessage } from '@mailyard/contracts';
import {
  type Config,
  type Consumer,
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import type { Stores } from '@mailyard/testkit/stores';
import { start } from '../../src/index';

export interface SendHarness {
  ctx: ServiceContext;
  config: Config;
  service: RunningService;
  /**
   * Every email event published on the bus, validated against the contract: a version-2 message
   * (the events of one group commit) adds each of its events.
   */
  published: EmailEvent[];
  /** Every delayed publish (retries) the service made on the real bus, in order. */
  delayed: DelayedPublish[];
  close(): Promise<void>;
}

export interface DelayedPublish {
  queue: string;
  payload: unknown;
  delayMs: number;
}

let collectorSeq = 0;

/** Runs the send service (start(ctx)) on the stores plus a consumer that collects published email events. */
export async function startSendService(
  stores: Stores,
  env: Record<string, string> = {},
): Promise<SendHarness> {
  const config = configFrom({
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    SEND_RETRY_DELAYS: '1,1,1,1',
    SEND_SMTP_TIMEOUT_MS: '5000',
    DNS_TIMEOUT_MS: '1000',
    // Receivers listen on 127.0.0.1: private hosts are allowed unless a test says otherwise.
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    ...stores.env,
    ...env,
  });
  const logger = createLogger('send-test', process.env.TEST_LOG_LEVEL ?? 'error');
  const ctx = await openContext(config, logger);
  const published: EmailEvent[] = [];
  const collector: Consumer = await ctx.bus.consume(
    {
      queue: `test.email-events.${++collectorSeq}`,
      bindings: [{ exchange: Exchange.events, routingKey: 'email.#' }],
    },
    async (d) => {
      const decoded = decodeEmailEventMessage(d.envelope.version, d.envelope.payload);
      if (!decoded.ok) throw new Error(`invalid email.event message: ${decoded.error}`);
      published.push(...decoded.events.map((item) => item.event));
    },
  );
  // Records each delayed publish, then makes it on the real bus.
  const delayed: DelayedPublish[] = [];
  const publishDelayed = ctx.bus.publishDelayed.bind(ctx.bus);
  ctx.bus.publishDelayed = (queue, env, delayMs) => {
    delayed.push({ queue, payload: env.payload, delayMs });
    return publishDelayed(queue, env, delayMs);
  };
  const service = await start(ctx);
  return {
    ctx,
    config,
    service,
    published,
    delayed,
    async close() {
      await service.stop();
      await collector.cancel();
      await closeContext(ctx);
    },
  };
}
