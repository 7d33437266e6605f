/**
 * One HTTP attempt of a webhook delivery. Contract:
 * - custom headers verbatim, then the service's own (they cannot be overridden: the API refuses
 *   them): Content-Type application/json, User-Agent, traceparent, and the Standard Webhooks
 *   headers webhook-id (the delivery id, the same on every retry), webhook-timestamp (seconds)
 *   and webhook-signature (when the target has a signing secret);
 * - the connection goes through the injected `lookup` (the outbound guard: resolved once,
 *   private targets refused unless allowed, the checked address is the one connected to);
 * - one timeout for the whole exchange (connect, TLS, headers, body); no redirect is followed
 *   (a 3xx is a failed attempt); only a 2xx is success;
 * - errors are described without resolved addresses (node's messages include them).
 */
import http from 'node:http';
import https from 'node:https';
import {
  type OutboundGuard,
  type OutboundLookup,
  isRefusedTarget,
  isUnresolvedTarget,
  refuseLiteral,
} from './outbound';
import { signWebhook } from './sign';

export interface DeliveryRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  deliveryId: string;
  /** `whsec_...`; no signature header without one (mailer incoming webhooks). */
  secret: string | null;
  traceparent: string | null;
}

export interface DeliveryDeps {
  guard: OutboundGuard;
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

const USER_AGENT = 'Mailyard-Webhooks/1.0';
/** Bytes of a response body read (and discarded) before the socket is released. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const agents = new WeakMap<OutboundLookup, Map<string, http.Agent>>();
/** One keep-alive agent per protocol and lookup: a socket is reused only after its address was checked. */
function agentFor(protocol: string, lookup: OutboundLookup): http.Agent {
  let byProtocol = agents.get(lookup);
  if (!byProtocol) {
    byProtocol = new Map();
    agents.set(lookup, byProtocol);
  }
  let a = byProtocol.get(protocol);
  if (!a) {
    const opts = { keepAlive: true, maxSockets: 64, lookup } as http.AgentOptions;
    a = protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
    byProtocol.set(protocol, a);
  }
  return a;
}

export function buildHeaders(req: DeliveryRequest, timestampS: number): Record<string, string> {
  const headers: Record<string, string> = { ...req.headers };
  for (const name of Object.keys(headers)) {
    if (/^(content-type|content-length|user-agent|traceparent|webhook-(id|timestamp|signature))$/i.test(name))
      delete headers[name];
  }
  headers['Content-Type'] = 'application/json';
  headers['User-Agent'] = USER_AGENT;
  if (req.traceparent) headers.traceparent = req.traceparent;
  headers['webhook-id'] = req.deliveryId;
  headers['webhook-timestamp'] = String(timestampS);
  if (req.secret)
    headers['webhook-signature'] = signWebhook(req.secret, req.deliveryId, timestampS, req.body);
  return headers;
}

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
    const refused = refuseLiteral(deps.guard, url.hostname);
    if (refused) return resolve({ ok: false, statusCode: null, latencyMs: 0, error: describeError(refused) });
    const body = Buffer.from(req.body, 'utf8');
    const timestampS = Math.floor(deps.now?.() ?? Date.now() / 1000);
    const headers = { ...buildHeaders(req, timestampS), 'Content-Length': String(body.length) };
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(url, {
      method: req.method,
      headers,
      lookup: deps.guard.lookup,
      agent: agentFor(url.protocol, deps.guard.lookup),
    });
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
export function describeError(err: NodeJS.ErrnoException & { causeCode?: string }): string {
  if (isRefusedTarget(err)) return 'target resolves to a private, loopback or link-local address';
  if (isUnresolvedTarget(err)) return 'host name does not resolve';
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
