import {
  type RunningService,
  type ServiceContext,
  boundPort,
  closeServer,
  listen,
  startOutboxRelay,
  storeReadiness,
} from '@mailyard/platform';
import { ensureBootstrapTenant, hasTenants } from '@mailyard/store';
import { buildGatewayApp, createEventHub } from './app';
import { KeyUsage } from './auth/key-usage';
import { domainCheckJob } from './domains/domain-checks';
import { type FirstRun, createFirstTenant, firstRunNotice, wantsFirstRun } from './first-run';
import { retentionJob } from './retention/job';

export { buildGatewayApp, createEventHub } from './app';
export { EventHub } from './events-stream/event-hub';
export { gatewaySettings } from './settings';
import { gatewayContext } from './settings';

/** Starts the public API on PORT and the outbox relay for the rows it writes. */
export async function start(serviceCtx: ServiceContext): Promise<RunningService> {
  const ctx = gatewayContext(serviceCtx);
  const { config, logger, db } = ctx;
  if (config.BOOTSTRAP_API_KEY) {
    const r = await ensureBootstrapTenant(db, config.BOOTSTRAP_API_KEY, config.BOOTSTRAP_TIER);
    if (r.created)
      logger.info('bootstrap tenant created', { tenant_id: r.tenantId, tier: config.BOOTSTRAP_TIER });
  }
  // Database work first: a start that fails here (database gone again) has started nothing and
  // can simply be retried.
  let noTenants = !(await hasTenants(db));
  let firstRun: FirstRun | undefined;
  if (wantsFirstRun(config, noTenants)) {
    firstRun = await createFirstTenant(db, logger);
    noTenants = false;
  }
  const relay = startOutboxRelay(ctx);
  // Background DNS re-check of sending domains; a kv lock lets one replica run each pass.
  const domainChecks = domainCheckJob(
    { db, config, logger, kv: ctx.kv, onOutboxWrite: () => relay.notify() },
    config.DOMAIN_CHECK_TICK_MS,
  );
  domainChecks.start();
  // Retention: one replica (kv lease) removes expired rows every RETENTION_SWEEP_INTERVAL.
  const retention = retentionJob({ db, kv: ctx.kv, logger, config });
  retention.start();
  const readiness = storeReadiness(ctx);
  // last_used_at of API keys, written in batches (docs/operations.md "API keys and scopes").
  const keyUsage = new KeyUsage(db, logger);
  keyUsage.start(config.API_KEY_LAST_USED_FLUSH_MS);
  const eventHub = createEventHub(ctx);
  const server = await listen(
    buildGatewayApp(ctx, readiness, { onOutboxWrite: () => relay.notify(), keyUsage, eventHub }),
    config.PORT,
    config.HOST,
  ).catch(async (err) => {
    await keyUsage.stop();
    await domainChecks.stop();
    await retention.stop();
    await relay.stop();
    await eventHub.close();
    throw err;
  });
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${boundPort(server)}`;
  return {
    name: 'gateway',
    banner: [
      `API ${url}/v1  health ${url}/healthz`,
      ...(config.ADMIN_API_KEY ? [`admin ${url}/admin/v1`] : []),
      ...(noTenants
        ? [
            config.DATABASE_URL
              ? 'no tenants yet: `pnpm cli tenant:create <name>` (same DATABASE_URL) prints an API key'
              : 'no tenants yet: restart with BOOTSTRAP_API_KEY=<key>, or stop and run `pnpm cli tenant:create <name>` (PGlite serves one process per DATA_DIR)',
          ]
        : []),
    ],
    ...(firstRun ? { notice: firstRunNotice(firstRun, url) } : {}),
    readiness,
    async stop() {
      // Streams never finish by themselves: end them first, or closing the server would wait.
      const closing = closeServer(server);
      await eventHub.close();
      await closing;
      await keyUsage.stop();
      await domainChecks.stop();
      await retention.stop();
      await relay.stop();
    },
  };
}
