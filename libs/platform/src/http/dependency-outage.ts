/**
 * Tells a dependency outage apart from a bug: whether an error that reached the HTTP error
 * handler means the database, the kv store or the bus is not answering (the request may succeed
 * later, so the API answers 503 with Retry-After, docs/deploy.md "Dependency outages") rather
 * than a fault of the service (500, logged with its stack). Pure: the error's shape, plus the
 * endpoints the service is configured with for bare socket errors.
 *
 * Recognised:
 * - PostgreSQL (pg, pg-pool): SQLSTATE class 08 (connection exception), 57P01/57P02/57P03
 *   (server shutting down, crashed, starting up), 53300 (too many connections); the driver's
 *   own "Connection terminated ...", "... not queryable" and the pool's "timeout exceeded when
 *   trying to connect".
 * - Redis (ioredis): the offline-queue refusal, "Connection is closed.", a command timeout,
 *   MaxRetriesPerRequestError.
 * - RabbitMQ (amqplib): "Channel closed" / "Connection closed" (IllegalOperationError).
 * - A socket error (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...) whose address and port are those of
 *   a configured dependency (`endpoints`). A socket error to any other address (a user's SMTP
 *   host, a webhook URL) is not an outage of ours: routes report those themselves.
 */

export type Dependency = 'database' | 'kv' | 'bus';

export interface DependencyEndpoint {
  dependency: Dependency;
  /** Host name or address from the URL. */
  host: string;
  port: number;
}

const PG_CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];
const REDIS_MESSAGES = [
  /^Stream isn't writeable and enableOfflineQueue options is false$/,
  /^Connection is closed\.$/,
  /^Command timed out$/,
  /^Reached the max retries per request limit/,
];
const AMQP_MESSAGES = [
  /^Channel closed$/,
  /^Connection closed/,
  /^Channel ended, no reply will be forthcoming$/,
];
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);

const DEFAULT_PORTS: Record<string, number> = {
  'postgres:': 5432,
  'postgresql:': 5432,
  'redis:': 6379,
  'rediss:': 6379,
  'amqp:': 5672,
  'amqps:': 5671,
};

/** The endpoints of the configured URLs (unset ones skipped; an unparsable one too). */
export function dependencyEndpoints(
  urls: Partial<Record<Dependency, string | undefined>>,
): DependencyEndpoint[] {
  const out: DependencyEndpoint[] = [];
  for (const [dependency, url] of Object.entries(urls) as Array<[Dependency, string | undefined]>) {
    if (!url) continue;
    try {
      const u = new URL(url);
      const port = u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol];
      if (port) out.push({ dependency, host: u.hostname.replace(/^\[|\]$/g, ''), port });
    } catch {
      // not a URL: nothing to match against
    }
  }
  return out;
}

const isLoopbackName = (host: string) => host === 'localhost';
const isLoopbackAddress = (a: string) => a === '::1' || a.startsWith('127.');

function endpointOf(err: { address?: unknown; port?: unknown }, endpoints: readonly DependencyEndpoint[]) {
  const { address, port } = err;
  if (typeof address !== 'string' || typeof port !== 'number') return null;
  return (
    endpoints.find(
      (e) =>
        e.port === port &&
        (e.host === address ||
          (isLoopbackName(e.host) && isLoopbackAddress(address)) ||
          // A host name resolved to `address`: the port is what we can match on.
          !/^[\d.:]+$/.test(e.host)),
    ) ?? null
  );
}

/** Which dependency `err` says is unavailable, or null when it is not an outage. */
export function dependencyOutage(
  err: unknown,
  endpoints: readonly DependencyEndpoint[] = [],
): Dependency | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as { code?: unknown; message?: unknown; name?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (/^[0-9A-Z]{5}$/.test(code) && (code.startsWith('08') || PG_CONNECTION_CODES.has(code)))
    return 'database';
  if (PG_MESSAGES.some((m) => m.test(message))) return 'database';
  if (e.name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((m) => m.test(message))) return 'kv';
  if (e.name === 'IllegalOperationError' && AMQP_MESSAGES.some((m) => m.test(message))) return 'bus';
  if (SOCKET_CODES.has(code)) {
    // Node reports a failed connect to every address of a name as one AggregateError.
    const attempts = Array.isArray(e.errors) ? [err, ...e.errors] : [err];
    for (const a of attempts) {
      const hit = endpointOf(a as { address?: unknown; port?: unknown }, endpoints);
      if (hit) return hit.dependency;
    }
  }
  return null;
}
