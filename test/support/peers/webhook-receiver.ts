import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';

/** A webhook receiver: a real node HTTP server on 127.0.0.1 that records every request. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body (undefined when it is not JSON). */
  json: unknown;
}

export interface Reply {
  status: number;
  /** Wait this long before answering (timeouts, slow receivers). */
  delayMs?: number;
  headers?: Record<string, string>;
}

export interface WebhookReceiver {
  port: number;
  url(path?: string): string;
  /** Requests received so far (answered or not), in arrival order. */
  requests: ReceivedRequest[];
  /** Requests to `path` (default: all). */
  to(path: string): ReceivedRequest[];
  /** How to answer request n (0-based, per path); default 200. */
  reply(fn: (req: ReceivedRequest, n: number) => Reply): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const perPath = new Map<string, number>();
  let replyFn: (req: ReceivedRequest, n: number) => Reply = () => ({ status: 200 });
  const server: Server = createServer((req, res) => {
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
      const received: ReceivedRequest = { method: req.method ?? '', path, headers: req.headers, body, json };
      const n = perPath.get(path) ?? 0;
      perPath.set(path, n + 1);
      requests.push(received);
      const r = replyFn(received, n);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(r.status, r.headers ?? {});
        res.end('ok');
      };
      if (r.delayMs) setTimeout(answer, r.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
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
