import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { type Spawned, freePort, portListenedBy, spawnTs } from '@mailyard/testkit/process';

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
  // The port freePort() handed out can be taken by another process before the gateway binds it;
  // then the gateway exits (EADDRINUSE) and the other listener must not be mistaken for it.
  for (let attempt = 1; ; attempt++) {
    const gw = await startOnce(env);
    if (gw) return gw;
    if (attempt === 3) throw new Error('gateway could not bind a free port in 3 attempts');
  }
}

async function startOnce(env: Record<string, string>): Promise<LiveGateway | null> {
  const port = await freePort();
  const proc = spawnTs('services/gateway/src/main.ts', {
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (proc.child.exitCode !== null) {
      if (/EADDRINUSE/.test(proc.output())) return null;
      throw new Error(`gateway exited at start:\n${proc.output()}`);
    }
    const ok = await rawRequest(url, { method: 'GET', path: '/healthz' }, undefined, 2000).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok && portListenedBy(port, proc.child.pid!)) break;
    if (ok && /EADDRINUSE/.test(proc.output())) {
      proc.child.kill('SIGTERM');
      await proc.exited;
      return null;
    }
    if (Date.now() > deadline) throw new Error(`gateway not listening after 90 s:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
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
  maxLatencyMs: number;
}

/**
 * Polls /healthz every `everyMs` on its own connection while a test runs: every probe must
 * answer 200; the slowest answer is reported (a liveness bound, not a benchmark).
 */
export function probeHealth(url: string, everyMs = 100): { stop(): Promise<HealthStats> } {
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
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return stats;
    },
  };
}
