import {
  Exchange,
  INBOUND_MESSAGE_QUEUE,
  INBOUND_MESSAGE_ROUTING_KEY,
  InboundMessageStoredSchema,
} from '@mailyard/contracts';
import {
  OutboxRelay,
  PermanentError,
  type RunningService,
  type ServiceContext,
  returnPathKey,
  storeReadiness,
} from '@mailyard/platform';
import { authenticationResults, createAuthResolver } from './authenticate';
import { inboundRoundTrips } from './group-commit';
import { processInboundMessage } from './process-message';
import { createInboundServer } from './server';
import { inboundSettings } from './settings';

export { decideAfterData, decideRecipient, decideServiceRecipient } from './acceptance';
export { inboundSettings } from './settings';

/**
 * Starts the MX service: smtp-server on SMTP_PORT (server.ts), an outbox relay announcing
 * stored messages (and publishing the bounce/complaint events), and the bus consumer that parses,
 * routes and hands them to the webhook dispatcher or records bounces, complaints and mailto
 * unsubscribes (process-message.ts, service-mail.ts). `env` holds its own variables (settings.ts).
 */
export async function start(
  ctx: ServiceContext,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningService> {
  const { config, logger, db, bus } = ctx;
  const settings = inboundSettings(config, env);
  if (!settings.tls && config.NODE_ENV === 'production')
    logger.warn('INBOUND_TLS_CERT/INBOUND_TLS_KEY not set: STARTTLS uses a self-signed certificate');
  const relay = new OutboxRelay(db, bus, logger, {
    pollMs: config.OUTBOX_POLL_MS,
    batchSize: config.OUTBOX_BATCH,
    retentionMs: config.OUTBOX_RETENTION_MS,
  });
  relay.start();
  const resolver = createAuthResolver(settings.dnsServers, settings.dnsTimeoutMs, settings.dnsCacheMs);
  const key = returnPathKey(ctx.sealer);
  const roundTrips = inboundRoundTrips(db);
  const consumer = await bus.consume(
    {
      queue: INBOUND_MESSAGE_QUEUE,
      bindings: [{ exchange: Exchange.commands, routingKey: INBOUND_MESSAGE_ROUTING_KEY }],
    },
    async (delivery) => {
      const parsed = InboundMessageStoredSchema.safeParse(delivery.envelope.payload);
      if (!parsed.success) throw new PermanentError('invalid inbound message announcement');
      await processInboundMessage(
        {
          db,
          logger,
          authenticate: (m) =>
            authenticationResults(
              { raw: m.raw, ip: m.remoteIp, helo: m.helo, mailFrom: m.mailFrom, mta: settings.hostname },
              resolver,
              settings.dnsTimeoutMs * 3,
              (err) =>
                logger.warn('message authentication failed', {
                  inbound_message_id: m.id,
                  error: err.message,
                }),
            ),
          returnPathKey: key,
          afterCommit: () => relay.notify(),
          roundTrips,
        },
        parsed.data.message_id,
      );
    },
  );
  const server = createInboundServer({
    db,
    logger,
    settings,
    returnPathKey: key,
    roundTrips,
    onStored: () => relay.notify(),
  });
  server.on('error', (err) => logger.error('SMTP server error', { error: err.message }));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  return {
    name: 'inbound-smtp',
    banner: [
      `inbound SMTP smtp://${settings.host}:${port} (${settings.hostname}, max ${settings.maxMessageBytes} bytes)`,
    ],
    readiness: storeReadiness(ctx),
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await consumer.cancel();
      await relay.stop();
    },
  };
}
