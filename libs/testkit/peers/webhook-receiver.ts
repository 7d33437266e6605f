import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { TEST_CA_CERT, TEST_CA_KEY, ensureTestCa } from './test-ca';

/**
 * A webhook receiver: a real node HTTP server on 127.0.0.1 that records every request; with
 * `tls: true` an HTTPS server with the test CA's certificate (the process trusts it through
 * NODE_EXTRA_CA_CERTS, as for the other HTTPS stand-ins).
 */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body (undefined when it is not JSON). */
  json: unknown;
  /** When the whole request had arrived (Date.now()). */
  receivedAt: number;
}

export interface Reply {
  status: number;
  /** Wait this long before answering (timeouts, slow receivers). */
  delayMs?: number;
  /** Answer only once this settles (a receiver that hangs until the test lets it go). */
  hold?: Promise<void>;
  headers?: Record<string, string>;
}

export interface WebhookReceiver {
  port: number;
  url(path?: string): string;
  /** Requests received so far (answered or not), in arrival order. */
  requests: ReceivedRequest[];
  /** Requests to `path` (default: all). */
  to(path: string): ReceivedRequest[];
  /**
   * One request per delivery to `path` (its first, by `webhook-id`, the same on every retry):
   * delivery is at-least-once, an attempt that timed out on a slow machine is sent again.
   */
  deliveries(path: string): ReceivedRequest[];
  /** Most requests to `path` that were open (received, not yet answered or aborted) at once. */
  maxOpen(path: string): number;
  /** How to answer request n (0-based, per path); default 200. */
  reply(fn: (req: ReceivedRequest, n: number) => Reply): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(o: { tls?: boolean } = {}): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const perPath = new Map<string, number>();
  const open = new Map<string, number>();
  const maxOpen = new Map<string, number>();
  let replyFn: (req: ReceivedRequest, n: number) => Reply = () => ({ status: 200 });
  const handler: Parameters<typeof createServer>[1] = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const path = req.url ?? '/';
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        body,
        json,
        receivedAt: Date.now(),
      };
      const n = perPath.get(path) ?? 0;
      perPath.set(path, n + 1);
      requests.push(received);
      const nowOpen = (open.get(path) ?? 0) + 1;
      open.set(path, nowOpen);
      maxOpen.set(path, Math.max(maxOpen.get(path) ?? 0, nowOpen));
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        open.set(path, (open.get(path) ?? 1) - 1);
      };
      res.on('close', close);
      const r = replyFn(received, n);
      const answer = () => {
        close();
        if (res.destroyed) return;
        res.writeHead(r.status, r.headers ?? {});
        res.end('ok');
      };
      if (r.hold) void r.hold.then(answer);
      else if (r.delayMs) setTimeout(answer, r.delayMs);
      else answer();
    });
  };
  const server: Server = o.tls
    ? createHttpsServer(
        await ensureTestCa().then(() => ({
          cert: readFileSync(TEST_CA_CERT),
          key: readFileSync(TEST_CA_KEY),
        })),
        handler,
      )
    : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    url: (path = '/hook') => `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}${path}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    deliveries(path) {
      const seen = new Set<string>();
      return requests.filter((r) => {
        const id = r.headers['webhook-id'];
        if (r.path !== path || (typeof id === 'string' && seen.has(id))) return false;
        if (typeof id === 'string') seen.add(id);
        return true;
      });
    },
    maxOpen: (path) => maxOpen.get(path) ?? 0,
    reply(fn) {
      replyFn = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
