/**
 * One HTTP exchange with retries. Retried: a 429 (the request was not processed) after its
 * Retry-After, and a network failure (no answer) only when the call is idempotent: GET, or a
 * send carrying an Idempotency-Key (the gateway replays the first outcome for the same key).
 * Everything else is thrown at once as a typed error (errors.ts).
 */
import { MailyardNetworkError, apiErrorFor } from './errors';

export interface RetryOptions {
  /** Extra attempts after the first (default 3). */
  retries: number;
  /** Backoff base for network errors, doubled per attempt (default 200 ms). */
  baseDelayMs: number;
  /** Longest wait accepted from Retry-After or backoff (default 60 s). */
  maxDelayMs: number;
}

export interface HttpOptions {
  apiKey: string;
  basePath: string;
  retry: RetryOptions;
  timeoutMs: number;
  fetch: typeof fetch;
  userAgent?: string;
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to send again after a network failure. */
  idempotent?: boolean;
}

export interface HttpResult<T> {
  status: number;
  headers: Headers;
  body: T;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retry-After as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export function buildUrl(basePath: string, path: string, query?: CallOptions['query']): string {
  const url = new URL(basePath.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url.toString();
}

export async function call<T>(opts: HttpOptions, c: CallOptions): Promise<HttpResult<T>> {
  const url = buildUrl(opts.basePath, c.path, c.query);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${opts.apiKey}`,
    Accept: 'application/json',
    ...(opts.userAgent ? { 'User-Agent': opts.userAgent } : {}),
    ...(c.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    ...c.headers,
  };
  const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
  const idempotent = c.idempotent ?? c.method === 'GET';
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await opts.fetch(url, {
        method: c.method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (err) {
      if (!idempotent || attempt >= opts.retry.retries) throw new MailyardNetworkError(c.method, c.path, err);
      // The platform's retry schedule (libs/platform/src/retry/backoff.ts backoffMs, unjittered), spelt
      // out here: the published client ships with no runtime dependencies.
      await sleep(Math.min(opts.retry.maxDelayMs, opts.retry.baseDelayMs * 2 ** attempt));
      continue;
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res.ok) return { status: res.status, headers: res.headers, body: body as T };
    const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
    if (res.status === 429 && attempt < opts.retry.retries) {
      const waitMs = (retryAfter ?? 1) * 1000;
      if (waitMs <= opts.retry.maxDelayMs) {
        await sleep(waitMs);
        continue;
      }
    }
    throw apiErrorFor(res.status, body, c.method, c.path, retryAfter);
  }
}
