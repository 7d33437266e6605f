/**
 * One HTTP attempt of a webhook delivery. Contract:
 * - headers as request-headers.ts builds them (custom ones verbatim once they pass the webhook
 *   header rule, then the service's own); a request that cannot be built (headers refused, or
 *   anything Node's client throws on) is a failed attempt with the reason, never an exception;
 * - the connection goes through the injected guarded agents (libs/platform's outbound guard:
 *   resolved once, IP literals and private targets refused unless allowed, the checked address
 *   is the one connected to);
 * - one timeout for the whole exchange (connect, TLS, headers, body); no redirect is followed
 *   (a 3xx is a failed attempt); only a 2xx is success;
 * - errors are described without resolved addresses (node's messages include them).
 */
import type http from 'node:http';
import { type GuardedAgents, type OutboundTargetError, guardedRequest } from '@mailyard/platform';
import { type HeaderSource, requestHeaders } from './request-headers';

export interface DeliveryRequest extends HeaderSource {
  url: string;
  method: string;
}

export interface DeliveryDeps {
  /** guardedAgents of the dispatcher's guard (keep-alive: a socket is reused only after its address was checked). */
  agents: GuardedAgents;
  timeoutMs: number;
  /** Seconds since the epoch (injectable for tests). */
  now?: () => number;
}

export interface DeliveryResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** Empty on success. */
  error: string;
}

/** Bytes of a response body read (and discarded) before the socket is released. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export function deliver(req: DeliveryRequest, deps: DeliveryDeps): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<DeliveryResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(req.url);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('protocol');
    } catch {
      return resolve({ ok: false, statusCode: null, latencyMs: 0, error: 'invalid webhook URL' });
    }
    const body = Buffer.from(req.body, 'utf8');
    const timestampS = Math.floor(deps.now?.() ?? Date.now() / 1000);
    const built = requestHeaders(req, timestampS);
    if (!built.ok) return resolve({ ok: false, statusCode: null, latencyMs: 0, error: built.error });
    const headers = { ...built.headers, 'Content-Length': String(body.length) };
    let request: http.ClientRequest;
    try {
      request = guardedRequest(url, { method: req.method, headers }, deps.agents);
    } catch (err) {
      // Node validates the method and every header before sending anything.
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
      return resolve({
        ok: false,
        statusCode: null,
        latencyMs: 0,
        error: `request could not be built (${code})`,
      });
    }
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, error: `timed out after ${deps.timeoutMs} ms` });
      request.destroy();
    }, deps.timeoutMs);
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) res.destroy();
      });
      const done = () => {
        const ok = status >= 200 && status < 300;
        const error = ok
          ? ''
          : status >= 300 && status < 400
            ? `HTTP ${status} (redirects are not followed)`
            : `HTTP ${status}`;
        finish({ ok, statusCode: status, error });
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      finish({ ok: false, statusCode: null, error: describeError(err) });
    });
    request.end(body);
  });
}

/** Node's network errors name the address they failed on; say what happened without it. */
export function describeError(
  err: (NodeJS.ErrnoException & { causeCode?: string }) | OutboundTargetError,
): string {
  if (err.code === 'ETARGET_PRIVATE') return 'target resolves to a private, loopback or link-local address';
  if (['ETARGET_UNRESOLVED', 'ENOTFOUND', 'EAI_AGAIN', 'ENODATA'].includes(String(err.code)))
    return 'host name does not resolve';
  switch (err.causeCode ?? err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      if (err.code?.startsWith('ERR_TLS') || /certificate|SSL|TLS/i.test(err.message))
        return `TLS error (${err.code ?? 'handshake failed'})`;
      return err.code ? `request failed (${err.code})` : 'request failed';
  }
}
