import winston from 'winston';
import { currentTrace, traceIdOf } from '../trace/context';
import { redact } from './redact';

export type Logger = winston.Logger;

const SPLAT = Symbol.for('splat');

const withContext = winston.format((info) => {
  const trace = currentTrace();
  if (trace) {
    if (info.request_id === undefined && trace.requestId) info.request_id = trace.requestId;
    if (info.trace_id === undefined) info.trace_id = traceIdOf(trace.traceparent);
    if (info.traceparent === undefined) info.traceparent = trace.traceparent;
    if (info.tenant_id === undefined && trace.tenantId) info.tenant_id = trace.tenantId;
  }
  return info;
});

const redactSecrets = winston.format((info) => {
  const copy = redact({ ...info }) as Record<string | symbol, unknown>;
  for (const key of Object.keys(copy)) (info as Record<string, unknown>)[key] = copy[key];
  delete (info as Record<symbol, unknown>)[SPLAT];
  return info;
});

/**
 * winston runs a logger's whole format chain (context, redaction, JSON) for every call and leaves
 * the level check to its transports, so a filtered-out `debug` on a hot path still cost its
 * formatting. Each level method here returns at once when no transport takes that level. Unbound
 * on purpose: a child logger (Object.create of this one) calls it with itself as `this`.
 */
function skipDisabledLevels(logger: Logger): Logger {
  const methods = logger as unknown as Record<string, (...args: unknown[]) => Logger>;
  for (const level of Object.keys(logger.levels)) {
    const emit = methods[level];
    if (typeof emit !== 'function') continue;
    methods[level] = function (this: Logger, ...args: unknown[]) {
      return this.isLevelEnabled(level) ? emit.apply(this, args) : this;
    };
  }
  return logger;
}

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  const logger = winston.createLogger({
    level,
    defaultMeta: { service },
    format: winston.format.combine(
      winston.format.errors({ stack: true }),
      winston.format.timestamp(),
      withContext(),
      redactSecrets(),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console({ silent: process.env.LOG_SILENT === '1' })],
  });
  return skipDisabledLevels(logger);
}
