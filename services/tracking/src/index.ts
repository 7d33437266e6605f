import {
  type RunningService,
  type ServiceContext,
  boundPort,
  closeServer,
  linkTokenKey,
  listen,
  reputationSettingsOf,
  startOutboxRelay,
  storeReadiness,
} from '@mailyard/platform';
import { setReputationSettings } from '@mailyard/store';
import { buildTrackingApp } from './app';
import { startCallbackWorker } from './callbacks/sparkpost-worker';
import { openGeoLookup } from './geoip';
import { trackingSettings } from './settings';

export { buildTrackingApp } from './app';
export { parseUserAgent } from './user-agent';
export { trackingSettings } from './settings';

/**
 * Starts the tracking service: open pixel, click redirect, unsubscribe and the provider callbacks
 * (SparkPost's event webhook) on TRACKING_PORT, the worker processing stored callback batches,
 * and an outbox relay publishing the events it records. Its own variables (settings.ts) are read
 * from `config.env`.
 */
export async function start(ctx: ServiceContext): Promise<RunningService> {
  const { config, logger, db } = ctx;
  const settings = trackingSettings(config);
  // The thresholds the event writer pauses senders with (docs/deliverability.md).
  setReputationSettings(reputationSettingsOf(config));
  const geo = await openGeoLookup(settings.geoipDb);
  const relay = startOutboxRelay(ctx);
  const readiness = storeReadiness(ctx);
  const afterCommit = () => relay.notify();
  const worker = startCallbackWorker({ db, logger, pollMs: settings.callbackPollMs, afterCommit });
  const app = buildTrackingApp(
    {
      db,
      logger,
      geo,
      key: linkTokenKey(ctx.sealer),
      afterCommit,
      callbacks: { db, onStored: () => worker.notify() },
    },
    { trustProxy: settings.trustProxy, readiness },
  );
  const server = await listen(app, settings.port, settings.host);
  if (config.DATABASE_URL && !settings.baseUrl.startsWith('https://')) {
    logger.warn(
      'TRACKING_BASE_URL is not an https origin: mail clients may refuse one-click unsubscribe (RFC 8058)',
      {
        tracking_base_url: settings.baseUrl,
      },
    );
  }
  const url = `http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${boundPort(server)}`;
  return {
    name: 'tracking',
    banner: [
      `tracking ${url} (public ${settings.baseUrl})  health ${url}/healthz${settings.geoipDb ? `  geoip ${settings.geoipDb}` : ''}`,
    ],
    readiness,
    async stop() {
      await closeServer(server);
      await worker.stop();
      await relay.stop();
    },
  };
}
