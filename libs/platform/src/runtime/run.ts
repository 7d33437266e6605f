import type { Server } from 'node:http';
import { ErrorText } from '@mailyard/contracts';
import type { Express } from 'express';
import { errorMessage } from '../bus/delivery';
import { type Config, ConfigError, loadConfig } from '../config/env';
import { createHttpApp, createOpsApp } from '../http/app';
import { HttpError } from '../http/errors';
import { boundPort, closeServer, holdPort, listen, releaseHeldPorts } from '../http/server';
import { type Logger, createLogger } from '../logger/logger';
import { enableDefaultMetrics } from '../metrics/registry';
import {
  type RunningService,
  type ServiceContext,
  type StartService,
  closeContext,
  describeStores,
  storeReadiness,
} from './context';
import {
  type RetryOptions,
  StartupCancelled,
  StartupState,
  openContextWhenReady,
  retryUntilReady,
} from './startup';

export interface RunOptions {
  /** Process name for logs and the banner ("gateway", or "mailyard" for all-in-one). */
  name: string;
  services: Record<string, StartService>;
  /**
   * The process's ops port when OPS_PORT is unset: `/healthz`, `/readyz` and `/metrics`, the only
   * port that serves `/metrics` (public ports answer it 404). OPS_PORT=0 binds any free port,
   * named in the banner. Every process has one: probes and Prometheus scrape it.
   */
  opsPort: number;
  /**
   * Ports the services bind themselves (the gateway's PORT). They are bound at once and answer
   * /healthz 200, /readyz 503 and 503 for everything else until the service takes them over.
   * They serve /healthz and /readyz (load balancers ask them), never /metrics.
   */
  servicePorts?: (config: Config) => number[];
  /**
   * Each service's settings parser (services/<name>/src/settings.ts), run before anything starts
   * so a bad service variable stops the process with its one line, like a bad core variable.
   */
  settings?: Array<(config: Config) => unknown>;
}

/**
 * Starts services in this process and handles SIGTERM/SIGINT: stop taking work, drain,
 * close stores, exit 0; a drain that overruns SHUTDOWN_TIMEOUT_MS exits 1. While a dependency
 * is down at start it keeps retrying (startup.ts) and never exits or hangs silently.
 */
export async function runProcess(opts: RunOptions): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
    for (const parse of opts.settings ?? []) parse(config);
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

  // Signals are handled from the first moment: a SIGTERM while waiting for the database stops
  // the wait and exits 0.
  let stopping = false;
  let stopRunning: (() => Promise<void>) | null = null;
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
      if (stopRunning) await stopRunning();
      else await releaseHeldPorts();
      logger.info('stopped');
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  const state = new StartupState();
  const retry: RetryOptions = { logger, state, cancelled: () => stopping };
  const opsPort = config.OPS_PORT ?? opts.opsPort;
  await holdPorts(opsPort, opts.servicePorts?.(config) ?? [], config, logger, state);

  let ctx: ServiceContext;
  const running: RunningService[] = [];
  try {
    ctx = await openContextWhenReady(config, logger, retry);
    for (const [name, start] of Object.entries(opts.services)) {
      const service = await retryUntilReady(
        `service:${name}`,
        `the ${name} service to start`,
        () => start({ ...ctx, logger: logger.child({ service: name }) }),
        retry,
      );
      running.push(service);
    }
  } catch (err) {
    if (err instanceof StartupCancelled) return; // shutdown() exits
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }

  const readiness = Object.assign(storeReadiness(ctx), ...running.map((s) => s.readiness ?? {}));
  const ops: Server = await listen(createOpsApp({ logger, readiness }), opsPort, config.HOST);
  await releaseHeldPorts();
  stopRunning = async () => {
    await closeServer(ops);
    await Promise.allSettled(running.reverse().map((s) => s.stop()));
    await closeContext(ctx);
  };
  if (stopping) {
    // SIGTERM arrived while the last service started: shutdown() already released the ports.
    await stopRunning();
    process.exit(0);
  }

  const banner = [
    `Mailyard ${opts.name} started (${config.DATABASE_URL || config.AMQP_URL || config.REDIS_URL ? 'servers' : 'embedded'} mode)`,
    ...running.flatMap((s) => s.banner.map((line) => `  ${s.name}: ${line}`)),
    `  ops: http://${config.HOST}:${boundPort(ops)}/healthz /readyz /metrics`,
    ...describeStores(config).map((l) => `  ${l}`),
  ];
  process.stdout.write(`${banner.join('\n')}\n`);
  for (const s of running) if (s.notice) process.stdout.write(`\n${s.notice}\n`);
  logger.info('started', { services: running.map((s) => s.name) });
}

/**
 * Binds the process's ports with a stand-in that reports start-up progress (the ops port's also
 * serves /metrics). An ops port of 0 is bound once the services run.
 */
async function holdPorts(
  opsPort: number,
  servicePorts: number[],
  config: Config,
  logger: Logger,
  state: StartupState,
): Promise<void> {
  const options = {
    logger,
    readiness: state.readiness(['db', 'bus', 'kv']),
    routes: (a: Express) =>
      a.use((_req, _res, next) =>
        next(new HttpError(503, ErrorText.starting, { headers: { 'Retry-After': '5' } })),
      ),
  };
  const standIn = createHttpApp(options);
  const ports: Array<[number, Express]> = [
    [opsPort, createOpsApp(options)],
    ...servicePorts.map((p): [number, Express] => [p, standIn]),
  ];
  for (const [port, app] of ports) {
    if (port <= 0) continue;
    try {
      await holdPort(app, port, config.HOST);
    } catch (err) {
      // The service's own listen reports the same problem once it starts; waiting goes on.
      logger.warn('could not bind the port while starting', { port, error: errorMessage(err) });
    }
  }
}
