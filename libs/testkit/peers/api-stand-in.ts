/**
 * The HTTP(S) server under the provider API stand-ins (gmail-api.ts, graph-api.ts): real node
 * servers on 127.0.0.1:<free port>, TLS by default with the test CA (test-ca.sh; the test process
 * trusts it through NODE_EXTRA_CA_CERTS), that
 *
 * - record every request (method, path, query, headers, body, arrival time),
 * - answer scripted faults first (`fail`: the next N matching requests get a status, e.g. 429
 *   with Retry-After, or 503),
 * - then check the bearer token against a `BearerGrant` (rotate, expire or revoke it from a test),
 *   or against the tokens an OAuth stand-in issued (`BearerCheck`, oauth-standin.ts `bearer()`),
 * - then hand the request to the stand-in's routes.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { TEST_CA_CERT, TEST_CA_KEY, ensureTestCa } from './dovecot';

export interface StandInRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Arrival time (epoch ms). */
  at: number;
}

export interface StandInReply {
  status: number;
  headers?: Record<string, string>;
  /** A Buffer or string is sent as is; anything else as JSON. */
  body?: unknown;
}

export interface Fault {
  status: number;
  /** Retry-After header value (seconds or an HTTP-date). */
  retryAfter?: string;
  body?: unknown;
  /** Only requests this matches (default: every request). */
  match?: (req: StandInRequest) => boolean;
  /** How many matching requests get it (default 1). */
  times?: number;
}

/**
 * The OAuth grant behind the stand-in's bearer tokens, as the provider's token endpoint would
 * keep it: `issue()` hands out a new access token (the old one stops working), as a refresh
 * does; `expire()` makes the current token invalid while the grant stays good; `revoke()` ends
 * the grant (no token works, `issue()` answers null: invalid_grant).
 */
/** Decides whether an Authorization header carries a token the API accepts. */
export interface BearerCheck {
  accepts(authorization: string | undefined): boolean;
}

export class BearerGrant implements BearerCheck {
  private current: string | null;
  private revokedAt: number | null = null;
  issued = 0;

  constructor(private readonly prefix: string) {
    this.current = this.mint();
  }

  /** The access token currently accepted (null once revoked or expired). */
  get token(): string | null {
    return this.current;
  }

  get revoked(): boolean {
    return this.revokedAt !== null;
  }

  issue(): string | null {
    if (this.revoked) return null;
    this.current = this.mint();
    return this.current;
  }

  expire(): void {
    this.current = null;
  }

  revoke(): void {
    this.revokedAt = Date.now();
    this.current = null;
  }

  accepts(authorization: string | undefined): boolean {
    return this.current !== null && authorization === `Bearer ${this.current}`;
  }

  private mint(): string {
    this.issued++;
    return `${this.prefix}.${this.issued}.${randomBytes(12).toString('base64url')}`;
  }
}

export interface ApiStandIn {
  /** `https://127.0.0.1:<port>` (or http). */
  url: string;
  port: number;
  requests: StandInRequest[];
  /** Answers the next matching request(s) with a fault instead of the route. */
  fail(fault: Fault): void;
  close(): Promise<void>;
}

export interface ApiStandInOptions {
  grant: BearerCheck;
  /** TLS with the test CA certificate (default true). */
  tls?: boolean;
  route: (req: StandInRequest) => StandInReply | Promise<StandInReply>;
  /** The provider's own answer to a missing or refused token. */
  unauthorized: (req: StandInRequest) => StandInReply;
}

function send(res: ServerResponse, reply: StandInReply): void {
  const headers = { ...(reply.headers ?? {}) };
  let body: Buffer | undefined;
  if (Buffer.isBuffer(reply.body)) body = reply.body;
  else if (typeof reply.body === 'string') body = Buffer.from(reply.body);
  else if (reply.body !== undefined) {
    body = Buffer.from(JSON.stringify(reply.body));
    headers['Content-Type'] ??= 'application/json; charset=utf-8';
  }
  res.writeHead(reply.status, headers);
  res.end(body);
}

export async function startApiStandIn(o: ApiStandInOptions): Promise<ApiStandIn> {
  const tls = o.tls ?? true;
  const requests: StandInRequest[] = [];
  const faults: Array<Fault & { left: number }> = [];
  let origin = '';

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: StandInRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', origin),
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      requests.push(r);
      const fault = faults.find((f) => f.left > 0 && (!f.match || f.match(r)));
      if (fault) {
        fault.left--;
        send(res, {
          status: fault.status,
          headers: fault.retryAfter !== undefined ? { 'Retry-After': fault.retryAfter } : {},
          body: fault.body ?? { error: { code: fault.status, message: 'scripted fault' } },
        });
        return;
      }
      if (!o.grant.accepts(req.headers.authorization)) {
        send(res, o.unauthorized(r));
        return;
      }
      Promise.resolve()
        .then(() => o.route(r))
        .then(
          (reply) => send(res, reply),
          (err: Error) => send(res, { status: 500, body: { error: { code: 500, message: err.message } } }),
        );
    });
  };

  const server = tls
    ? createHttpsServer(
        await ensureTestCa().then(() => ({
          cert: readFileSync(TEST_CA_CERT),
          key: readFileSync(TEST_CA_KEY),
        })),
        handler,
      )
    : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url: origin,
    port,
    requests,
    fail(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Addresses named in a header value ("Ann <ann@x>, bob@y"), lower-cased. */
export function headerAddresses(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  for (const part of value.replace(/"(?:[^"\\]|\\.)*"/g, '""').split(',')) {
    const angle = /<([^>]+)>/.exec(part);
    const bare = angle ? angle[1]! : part.trim();
    if (bare.includes('@')) out.push(bare.trim().toLowerCase());
  }
  return out;
}

/** Top-level headers of a raw message (unfolded, lower-case names; the first of each name). */
export function messageHeaders(raw: Buffer): Record<string, string> {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = end === -1 ? text : text.slice(0, end);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return headers;
}

/** `raw` with every `name` header removed and `line` (if given) put first. */
export function replaceHeader(raw: Buffer, name: string, line?: string): Buffer {
  const text = raw.toString('latin1');
  const m = /\r?\n\r?\n/.exec(text);
  const end = m ? m.index : text.length;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.slice(0, end).split(/\r?\n/);
  const kept: string[] = [];
  let dropping = false;
  for (const l of lines) {
    if (/^[ \t]/.test(l)) {
      if (!dropping) kept.push(l);
      continue;
    }
    dropping = l.toLowerCase().startsWith(`${name.toLowerCase()}:`);
    if (!dropping) kept.push(l);
  }
  if (line) kept.unshift(line);
  return Buffer.from(kept.join(nl) + text.slice(end), 'latin1');
}

/**
 * A token source for tests (the shape of libs/providers' TokenSource) over a stand-in's grant,
 * behaving like a caching OAuth client: it keeps its token until the API client reports it
 * refused (`rejected`), then "refreshes" by having the grant issue a new one; a revoked grant
 * makes it throw `revokedError()` (invalid_grant). `asked` records each request's `rejected`.
 */
export function grantTokenSource(grant: BearerGrant, revokedError: () => Error) {
  let cached: string | null = grant.token;
  const asked: Array<string | undefined> = [];
  const source = async (request?: { rejected?: string }): Promise<string> => {
    asked.push(request?.rejected);
    if (cached === null || (request?.rejected !== undefined && request.rejected === cached)) {
      const next = grant.issue();
      if (next === null) throw revokedError();
      cached = next;
    }
    return cached;
  };
  return { source, asked };
}
