/**
 * The send handler's surroundings on the real servers, without the running service: private
 * stores (PostgreSQL, RabbitMQ vhost), Postfix's smtp-sink as the relay, a service context and
 * the send transports. Tests build the production handler on it (createSendHandler with
 * consumerDeps) and deliver messages to it themselves; no outbox relay runs, so the commands a
 * fixture writes stay unpublished.
 */
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { type SmtpSink, startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { sendTokens } from '../../src/index';
import { sendSettings } from '../../src/settings';
import { Transports } from '../../src/transports';

export interface HandlerStack {
  ctx: ServiceContext;
  sink: SmtpSink;
  transports: Transports;
  /** Envelope recipients the sink received, by address (how many messages each). */
  received(): Map<string, number>;
  stop(): Promise<void>;
}

export async function startHandlerStack(name: string): Promise<HandlerStack> {
  const stores: Stores = await createStores();
  const sink = await startSmtpSink({ dump: true });
  const ctx = await openContext(
    configFrom({ LOG_LEVEL: 'error', ...stores.env, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}` }),
    createLogger(name, 'error'),
  );
  const settings = sendSettings(ctx.config);
  const transports = new Transports(settings, sendTokens(ctx, settings));
  return {
    ctx,
    sink,
    transports,
    received() {
      const count = new Map<string, number>();
      for (const m of sink.messages()) for (const to of m.to) count.set(to, (count.get(to) ?? 0) + 1);
      return count;
    },
    async stop() {
      transports.close();
      await closeContext(ctx);
      await sink.stop();
      await stores.drop();
    },
  };
}
