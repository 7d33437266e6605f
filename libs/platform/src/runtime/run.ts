import type { Server } from 'node:http';
import { type Config, ConfigError, loadConfig } from '../config/env';
import { createHttpApp } from '../http/app';
import { closeServer, listen } from '../http/server';
import { createLogger } from '../logger/logger';
import { enableDefaultMetrics } from '../metrics/registry';
import {
  type RunningService,
  type StartService,
  closeContext,
  describeStores,
  openContext,
  storeReadiness,
} from './context';

export interface RunOptions {
  /** Process name for logs and the banner ("gateway", or "mailyard" for all-in-one). */
  name: string;
  services: Record<string, StartService>;
  /** Serve /healthz, /readyz, /metrics on this port (services without their own HTTP port). */
  opsPort?: (config: Config) => number;
}

/**
 * Starts services in this process and handles SIGTERM/SIGINT: stop taking work, drain,
 * close stores, exit 0; a drain that overruns SHUTDOWN_TIMEOUT_MS exits 1.
 */
export async function runProcess(opts: RunOptions): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(opts.name, config.LOG_LEVEL);
  enableDefaultMetrics();
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { err: reason }));

  let ctx: Awaited<ReturnType<typeof openContext>>;
  try {
    ctx = await openContext(config, logger);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const running: RunningService[] = [];
  for (const [name, start] of Object.entries(opts.services)) {
    try {
      running.push(await start({ ...ctx, logger: logger.child({ service: name }) }));
    } catch (err) {
      // A service's own settings (its settings.ts) are checked when it starts.
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`${err.message}\n`);
      await Promise.allSettled(running.reverse().map((s) => s.stop()));
      await closeContext(ctx);
      process.exit(1);
    }
  }

  let ops: Server | undefined;
  const opsPort = opts.opsPort?.(config) ?? 0;
  if (opsPort) {
    const readiness = Object.assign(storeReadiness(ctx), ...running.map((s) => s.readiness ?? {}));
    ops = await listen(createHttpApp({ logger, readiness }), opsPort, config.HOST);
  }

  const banner = [
    `Mailyard ${opts.name} started (${config.DATABASE_URL || config.AMQP_URL || config.REDIS_URL ? 'servers' : 'embedded'} mode)`,
    ...running.flatMap((s) => s.banner.map((line) => `  ${s.name}: ${line}`)),
    ...(ops ? [`  ops: http://${config.HOST}:${opsPort}/healthz /readyz /metrics`] : []),
    ...describeStores(config).map((l) => `  ${l}`),
  ];
  process.stdout.write(`${banner.join('\n')}\n`);
  logger.info('started', { services: running.map((s) => s.name) });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const timer = setTimeout(() => {
      logger.error('shutdown timed out', { timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    try {
      if (ops) await closeServer(ops);
      await Promise.allSettled(running.reverse().map((s) => s.stop()));
      await closeContext(ctx);
      logger.info('stopped');
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
