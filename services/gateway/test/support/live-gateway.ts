import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { type Spawned, spawnTs, startOnFreePort } from '@mailyard/testkit/process';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface RawRequest {
  method: string;
  /** Sent as is (may hold deliberate bad percent-encoding). */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

/** One HTTP request with full control over bytes and headers (no client-side normalisation). */
export function rawRequest(
  base: string,
  req: RawRequest,
  agent?: Agent,
  timeoutMs = 30_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent,
        headers: {
          ...(req.body ? { 'Content-Length': String(req.body.length) } : {}),
          ...req.headers,
        },
        timeout: timeoutMs,
      },
      (res) => {
        // An event stream (GET /v1/events/stream) never ends: its status and headers are the answer.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('timeout', () =>
      r.destroy(new Error(`no answer within ${timeoutMs} ms: ${req.method} ${req.path}`)),
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Resident memory of a process in bytes (Linux). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface LiveGateway {
  url: string;
  process: Spawned;
  pid: number;
  stop(): Promise<void>;
}

/** The gateway as production runs it (services/gateway/src/main.ts in its own process). */
export async function startLiveGateway(env: Record<string, string>): Promise<LiveGateway> {
  // The banner is printed once the gateway listens, so the port is its own; a port another
  // process took meanwhile ends in EADDRINUSE and startOnFreePort tries another.
  const { p: proc, port } = await startOnFreePort(
    (p) =>
      spawnTs('services/gateway/src/main.ts', {
        LOG_LEVEL: 'error',
        HOST: '127.0.0.1',
        PORT: String(p),
        ...env,
      }),
    /Mailyard gateway started/,
    90_000,
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    process: proc,
    pid: proc.child.pid!,
    async stop() {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
    },
  };
}

export interface HealthStats {
  probes: number;
  failures: string[];
  /** Reported in the test output (a measurement, never asserted). */
  maxLatencyMs: number;
}

/**
 * Polls /healthz (paced `everyMs` apart) on its own connection while a test runs: every probe
 * must answer 200. `answered()` counts the probes so far, to wait for more of them.
 */
export function probeHealth(
  url: string,
  everyMs = 100,
): { answered(): number; stop(): Promise<HealthStats> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stats: HealthStats = { probes: 0, failures: [], maxLatencyMs: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      try {
        const res = await rawRequest(url, { method: 'GET', path: '/healthz' }, agent, 60_000);
        if (res.status !== 200) stats.failures.push(`status ${res.status}`);
      } catch (err) {
        stats.failures.push((err as Error).message);
      }
      stats.probes++;
      stats.maxLatencyMs = Math.max(stats.maxLatencyMs, Date.now() - started);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    answered: () => stats.probes,
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return stats;
    },
  };
}
