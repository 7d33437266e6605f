/**
 * The HTTP accept floor: a bare node:http server and a bare express app (http-server.ts, each its
 * own process) answering the send bench's own `POST /v1/email/send` bodies, driven by the same
 * autocannon client as the single and batch phases (same connections, same per-request body
 * generator and response parsing: bench/send/ledger.ts). Per request: the server process's CPU
 * (/proc), this process's CPU (autocannon's, the client side), the closed-loop rate and
 * latency (p50, p99, mean) it reaches.
 */
import { loadavg } from 'node:os';
import { freePort, spawnTs } from '@mailyard/testkit/process';
import autocannon from 'autocannon';
import { RequestLedger } from '../send/ledger';
import { cpuMsOf, processTree } from '../support/cpu';
import { stopProcess } from '../support/proc';

export interface HttpLoad {
  /** The body of request `i` (the send bench's singleBody / batchBody). */
  body: (i: number) => string;
  key: 'i' | 'batch';
  requests: number;
  connections: number;
}

export interface HttpFloorResult {
  server: 'node' | 'express';
  requests: number;
  connections: number;
  requests_per_sec: number;
  latency_ms: { p50: number; p99: number; mean: number };
  /** CPU ms per request: the server process and this process (autocannon). */
  server_cpu_ms_per_request: number;
  client_cpu_ms_per_request: number;
  non_2xx: number;
  errors: number;
  loadavg: number[];
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Starts the bare server `kind`; returns its URL, its pids and a stop function. */
export async function startBareServer(kind: 'node' | 'express') {
  const port = await freePort();
  const proc = spawnTs('bench/floors/http-server.ts', {
    PORT: String(port),
    FLOOR_SERVER: kind,
    NODE_ENV: 'production',
  });
  await proc.waitFor(/listening/, 30_000);
  return {
    url: `http://127.0.0.1:${port}/v1/email/send`,
    pids: () => processTree(proc.child.pid!),
    stop: () => stopProcess(proc),
  };
}

/** One closed-loop run of `load` against `server`, measured. */
export async function httpRun(
  kind: 'node' | 'express',
  server: Awaited<ReturnType<typeof startBareServer>>,
  load: HttpLoad,
): Promise<HttpFloorResult> {
  let n = 0;
  const ledger = new RequestLedger(load.key, () => n++, load.body);
  const serverCpu = () => server.pids().reduce((s, p) => s + (cpuMsOf(p) ?? 0), 0);
  const s0 = serverCpu();
  const c0 = selfCpuMs();
  const t0 = performance.now();
  const result = await autocannon({
    url: server.url,
    method: 'POST',
    headers: { authorization: 'Bearer floor', 'content-type': 'application/json' },
    connections: load.connections,
    amount: load.requests,
    timeout: 10,
    requests: [ledger.request()],
  });
  const seconds = (performance.now() - t0) / 1000;
  const clientMs = selfCpuMs() - c0;
  const serverMs = serverCpu() - s0;
  return {
    server: kind,
    requests: load.requests,
    connections: load.connections,
    requests_per_sec: Math.round(load.requests / seconds),
    latency_ms: { p50: result.latency.p50, p99: result.latency.p99, mean: r3(result.latency.average) },
    server_cpu_ms_per_request: r3(serverMs / load.requests),
    client_cpu_ms_per_request: r3(clientMs / load.requests),
    non_2xx: result.non2xx,
    errors: result.errors,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The server `kind` under `loads` in turn, each after a warm-up of its own shape. */
export async function httpFloor(kind: 'node' | 'express', loads: Record<string, HttpLoad>) {
  const server = await startBareServer(kind);
  try {
    const out: Record<string, HttpFloorResult> = {};
    for (const [name, load] of Object.entries(loads)) {
      // Warm-up of this shape (JIT of both sides, the connections), then the measured run.
      await httpRun(kind, server, {
        ...load,
        requests: Math.max(load.connections, Math.ceil(load.requests / 5)),
      });
      out[name] = await httpRun(kind, server, load);
    }
    return out;
  } finally {
    await server.stop();
  }
}
