import type { EmailEvent } from '@mailyard/contracts';
import {
  type Config,
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { collectEmailEvents } from '@mailyard/testkit/email-events';
import type { Stores } from '@mailyard/testkit/stores';
import { start } from '../../src/index';

export interface SendHarness {
  ctx: ServiceContext;
  config: Config;
  service: RunningService;
  /**
   * Every distinct email event published on the bus so far, validated against the contract
   * (@mailyard/testkit/email-events: both message versions, a redelivered message counted once;
   * throws if an invalid message arrived).
   */
  published(): EmailEvent[];
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
  const collector = await collectEmailEvents(ctx.bus, `test.email-events.${++collectorSeq}`);
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
    published: collector.events,
    delayed,
    async close() {
      await service.stop();
      await collector.cancel();
      await closeContext(ctx);
    },
  };
}
