import {
  Exchange,
  INBOUND_MESSAGE_QUEUE,
  INBOUND_MESSAGE_ROUTING_KEY,
  InboundMessageStoredSchema,
} from '@mailyard/contracts';
import {
  PermanentError,
  type RunningService,
  type ServiceContext,
  reputationSettingsOf,
  returnPathKey,
  startOutboxRelay,
  storeReadiness,
} from '@mailyard/platform';
import { ByteBudget } from '@mailyard/platform';
import type { StoredInboundMessage } from '@mailyard/store';
import { setReputationSettings } from '@mailyard/store';
import { authenticationResults, createAuthResolver } from './authenticate';
import { boundedWork } from './bounded-work';
import { inboundRoundTrips } from './group-commit';
import { type ProcessDeps, processInboundMessage, processStoredMessage } from './process-message';
import { startRecoverySweep } from './recovery-sweep';
import { createInboundServer } from './server';
import { inboundSettings } from './settings';

/** Most stored messages processed in this process at once; more wait for the recovery sweep. */
const MAX_IN_PROCESS = 500;

export { decideAfterData, decideRecipient, decideServiceRecipient } from './acceptance';

/** The running MX: besides start/stop, the bytes its sessions hold (tests read the bound). */
export interface InboundService extends RunningService {
  held(): { bytes: number; peak: number };
}
export { inboundSettings } from './settings';

/**
 * Starts the MX service: smtp-server on SMTP_PORT (server.ts); each message it stores is
 * processed in this process right away, from memory (parsed, routed and handed to the webhook
 * dispatcher, or recorded as bounce, complaint or mailto unsubscribe: process-message.ts,
 * service-mail.ts); a recovery sweep (recovery-sweep.ts) processes what stayed `stored` past
 * INBOUND_RECOVERY_LEASE_MS (a crash after the 250); the bus consumer still takes announcements
 * of earlier versions; an outbox relay publishes the bounce/complaint events. Its own variables
 * are parsed from `config.env` (settings.ts).
 */
export async function start(ctx: ServiceContext): Promise<InboundService> {
  const { config, logger, db, bus } = ctx;
  const settings = inboundSettings(config);
  // The thresholds the event writer pauses senders with (docs/deliverability.md).
  setReputationSettings(reputationSettingsOf(config));
  if (!settings.tls && config.NODE_ENV === 'production')
    logger.warn('INBOUND_TLS_CERT/INBOUND_TLS_KEY not set: STARTTLS uses a self-signed certificate');
  const relay = startOutboxRelay(ctx);
  const resolver = createAuthResolver(settings.dnsServers, settings.dnsTimeoutMs, settings.dnsCacheMs);
  const key = returnPathKey(ctx.sealer);
  const roundTrips = inboundRoundTrips(db);
  const processDeps: ProcessDeps = {
    db,
    logger,
    authenticate: (m) =>
      authenticationResults(
        { raw: m.raw, ip: m.remoteIp, helo: m.helo, mailFrom: m.mailFrom, mta: settings.hostname },
        resolver,
        settings.dnsTimeoutMs * 3,
        (err) =>
          logger.warn('message authentication failed', { inbound_message_id: m.id, error: err.message }),
      ),
    returnPathKey: key,
    afterCommit: () => relay.notify(),
    roundTrips,
  };
  // Announcements of messages stored by an earlier version (and any published by hand): the same
  // idempotent processing, loaded from the database.
  const consumer = await bus.consume(
    {
      queue: INBOUND_MESSAGE_QUEUE,
      bindings: [{ exchange: Exchange.commands, routingKey: INBOUND_MESSAGE_ROUTING_KEY }],
    },
    async (delivery) => {
      const parsed = InboundMessageStoredSchema.safeParse(delivery.envelope.payload);
      if (!parsed.success) throw new PermanentError('invalid inbound message announcement');
      await processInboundMessage(processDeps, parsed.data.message_id);
    },
  );
  const recovery = startRecoverySweep(db, logger, (id) => processInboundMessage(processDeps, id), {
    leaseMs: settings.recoveryLeaseMs,
    intervalMs: Math.min(5_000, settings.recoveryLeaseMs),
  });
  void recovery
    .sweep()
    .catch((err: Error) => logger.error('inbound recovery sweep failed', { error: err.message }));
  // In-process path: the message just stored, from memory; what does not finish here (crash,
  // failure) stays `stored` and the recovery sweep takes it after the lease. Bounded: beyond
  // MAX_IN_PROCESS messages or INBOUND_MAX_INFLIGHT_BYTES of raw message in work (processing
  // slower than accepting, e.g. DNS hanging) a message is left to the sweep instead of held in
  // memory (bounded-work.ts).
  const inProcess = boundedWork(
    MAX_IN_PROCESS,
    (message: StoredInboundMessage) => processStoredMessage(processDeps, message),
    (message, err) =>
      logger.error('processing inbound message failed; left to recovery', {
        inbound_message_id: message.id,
        error: err.message,
      }),
    { budget: new ByteBudget(settings.maxInflightBytes), weigh: (message) => message.raw.length },
  );
  const inbound = createInboundServer({
    db,
    logger,
    settings,
    returnPathKey: key,
    roundTrips,
    onStored: (message) => {
      inProcess.offer(message);
    },
  });
  const server = inbound.smtp;
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
    held: inbound.held,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await consumer.cancel();
      await recovery.stop();
      await relay.stop();
    },
  };
}
