/**
 * The `floors` phase of bench:send (issue 14): in one run, on this machine, each irreducible
 * piece of a delivered email with the mandated stack doing the minimum, as CPU-ms per email of
 * every process involved (server and client/peer sides: they share the same cores), then the
 * budget of each aim against the machine's cores (budget.ts):
 *
 * 1. http: bare node:http (and bare express, for reference) answering the send bench's own
 *    bodies, driven by the same autocannon settings as the single and batch phases
 *    (http-floor.ts);
 * 2. store: the libs/store statements of accept, copy load, delivery record and relay with the
 *    largest batches the design allows, one backend (store-floor.ts);
 * 3. bus: the relay's very messages through RabbitMQ, publish with confirms, consume, ack
 *    (bus-floor.ts);
 * 4. copy: the send service's per-copy code to smtp-sink (bench/send/floor.ts), with smtp-sink's
 *    own CPU.
 *
 * Each floor runs alone, one after the other, with no services running; its own database and
 * vhost. The budget takes node:http (the gateway's send route runs on node:http in front of
 * express) as the HTTP floor. A floor is only a lower bound where the piece really is the
 * minimum; what each one leaves out is in `leaves_out` of the report.
 */
import { cpus, loadavg } from 'node:os';
import type { DkimKeyPair } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { createTestDatabase } from '@mailyard/testkit/servers';
import { floorCost } from '../send/floor';
import { CpuMeter, pidsByName, processTree } from '../support/cpu';
import { migrateAsServices } from '../support/services';
import { type AimBudget, type FloorPiece, aimBudget, budgetSummary } from './budget';
import { busFloor } from './bus-floor';
import { httpFloor } from './http-floor';
import { storeFloor } from './store-floor';

export interface FloorsOptions {
  singleBody: (i: number) => string;
  batchBody: (i: number) => string;
  key: DkimKeyPair;
  domain: string;
  connections: number;
  batchConnections: number;
  recipients: number;
  /** Copies the copy floor delivers (BENCH_FLOOR_EMAILS). */
  copyEmails: number;
  aims: { single_per_sec: number; single_p99_ms: number; batch_per_sec: number };
}

const HTTP_REQUESTS = Number(process.env.BENCH_FLOORS_REQUESTS ?? 20_000);
const HTTP_BATCH_REQUESTS = Number(process.env.BENCH_FLOORS_BATCH_REQUESTS ?? 400);
const STORE_EMAILS = Number(process.env.BENCH_FLOORS_EMAILS ?? 5000);
/** Bus messages per measurement, at least (the list of the store floor's relay, repeated). */
const BUS_MESSAGES = Number(process.env.BENCH_FLOORS_BUS_MESSAGES ?? 10_000);
/** Copies in flight in the send service (SEND_CONCURRENCY): the event writer's largest group. */
const SEND_CONCURRENCY = 64;

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);

export const LEAVES_OUT = {
  http: 'auth (API key), rate limit (Redis), validation, ids, the durable commit (store floor), metrics, logging; express/router (bare express is reported beside it)',
  store:
    'the accept context read (mailer/template, cacheable), idempotency keys, lock waits and retries under concurrency, the server-wide processes (WAL writer, checkpointer, autovacuum; the pipeline figure leaves them out too); no mailer row, so the loader fingerprints none',
  bus: "envelope validation on consumption, tracing, the bus's reconnect/retry bookkeeping, the email events' own consumer (webhook dispatcher)",
  copy: "the send service's command handling (load, events, acks: store and bus floors), DNS/MX (relay), retries; a batch copy stands for a single one (same content, one recipient)",
};

/** The copy floor with its smtp-sink's CPU (the sink started here: this process's new child). */
async function copyFloor(o: FloorsOptions) {
  const sinksOf = () => processTree(process.pid).filter((p) => pidsByName('smtp-sink').includes(p));
  const before = new Set(sinksOf());
  const sink = await startSmtpSink({ backlog: 1024 });
  try {
    const mine = sinksOf().filter((p) => !before.has(p));
    return await floorCost({
      body: o.batchBody,
      key: o.key,
      domain: o.domain,
      sinkPort: sink.port,
      emails: o.copyEmails,
      recipients: o.recipients,
      concurrency: SEND_CONCURRENCY,
      connections: 8,
      peers: new CpuMeter({ smtp_sink: () => mine }),
    });
  } finally {
    await sink.stop();
  }
}

export async function floorsPhase(o: FloorsOptions) {
  const startedAt = load();
  const t0 = Date.now();
  const http = {
    node: await httpFloor('node', {
      single: { body: o.singleBody, key: 'i', requests: HTTP_REQUESTS, connections: o.connections },
      batch: {
        body: o.batchBody,
        key: 'batch',
        requests: HTTP_BATCH_REQUESTS,
        connections: o.batchConnections,
      },
    }),
    express: await httpFloor('express', {
      single: { body: o.singleBody, key: 'i', requests: HTTP_REQUESTS, connections: o.connections },
    }),
  };

  const db = await createTestDatabase();
  let store: Awaited<ReturnType<typeof storeFloor>>;
  try {
    await migrateAsServices(db.url);
    store = await storeFloor(db.url, {
      single: {
        body: o.singleBody,
        sendsCount: STORE_EMAILS,
        acceptGroup: o.connections,
        loadGroup: SEND_CONCURRENCY,
        eventGroup: SEND_CONCURRENCY,
      },
      batch: {
        body: o.batchBody,
        sendsCount: Math.max(1, Math.ceil(STORE_EMAILS / o.recipients)),
        acceptGroup: o.batchConnections,
        loadGroup: o.recipients,
        eventGroup: SEND_CONCURRENCY,
      },
    });
  } finally {
    await db.drop();
  }
  const bus: Record<string, Awaited<ReturnType<typeof busFloor>>> = {};
  for (const [name, s] of Object.entries(store)) {
    const repeat = Math.max(1, Math.ceil(BUS_MESSAGES / s.relayed.length));
    bus[name] = await busFloor(s.relayed, s.emails, repeat);
  }
  const copy = await copyFloor(o);

  const tailRatio = http.node.single!.latency_ms.p99 / Math.max(0.001, http.node.single!.latency_ms.mean);
  const pieces = (shape: 'single' | 'batch', perRequest: number): FloorPiece[] => {
    const h = http.node[shape]!;
    const s = store[shape]!;
    const b = bus[shape]!;
    return [
      {
        floor: 'http',
        accept_path: true,
        cpu_ms_per_email: {
          http_server: h.server_cpu_ms_per_request / perRequest,
          bench_client: h.client_cpu_ms_per_request / perRequest,
        },
      },
      { floor: 'store_accept', accept_path: true, cpu_ms_per_email: s.accept_path },
      { floor: 'store_delivery', accept_path: false, cpu_ms_per_email: s.delivery },
      {
        floor: 'bus',
        accept_path: false,
        cpu_ms_per_email: {
          rabbitmq: b.rabbitmq_cpu_ms_per_email,
          amqp_client: b.amqp_client_cpu_ms_per_email,
        },
      },
      {
        floor: 'copy',
        accept_path: false,
        cpu_ms_per_email: {
          send_copy: copy.cpu_ms_per_email,
          smtp_sink: copy.peer_cpu_ms_per_email?.smtp_sink ?? 0,
        },
      },
    ];
  };
  const cores = cpus().length;
  const budgets: Record<string, AimBudget> = {
    single: aimBudget(
      {
        aim: `single (${o.aims.single_per_sec} delivered/s, accept p99 < ${o.aims.single_p99_ms} ms at ${o.connections} connections)`,
        target_per_sec: o.aims.single_per_sec,
        pieces: pieces('single', 1),
        latency: { connections: o.connections, p99_target_ms: o.aims.single_p99_ms, tail_ratio: tailRatio },
      },
      cores,
    ),
    batch: aimBudget(
      {
        aim: `batch (${o.aims.batch_per_sec} delivered/s, ${o.recipients} recipients per request)`,
        target_per_sec: o.aims.batch_per_sec,
        pieces: pieces('batch', o.recipients),
      },
      cores,
    ),
  };
  const { relayed: _s, ...storeSingle } = store.single!;
  const { relayed: _b, ...storeBatch } = store.batch!;
  return {
    note: 'each floor alone, one after the other, no services running; CPU-ms per email of every process involved',
    loadavg_at_start: startedAt,
    loadavg_at_end: load(),
    seconds: Math.round((Date.now() - t0) / 1000),
    http: {
      ...http,
      bare_node_tail_ratio_p99_to_mean: r3(tailRatio),
    },
    store: { single: storeSingle, batch: storeBatch },
    bus,
    copy,
    leaves_out: LEAVES_OUT,
    budget: budgets,
    summary: [budgetSummary(budgets.single!), budgetSummary(budgets.batch!)],
  };
}
