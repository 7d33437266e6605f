/**
 * `pnpm bench:events-stream`: does the live event stream keep up with bench:send's single-send
 * load, and does a client that stops reading get dropped rather than buffered without bound?
 * (issue 26, speed aim 3; docs/operations.md "Live events").
 *
 * The send pipeline as bench:send runs it (gateway and send service each their own process, the
 * real PostgreSQL, RabbitMQ and Redis, Postfix's smtp-sink as relay), then rounds alternating
 * - `base`: BENCH_EMAILS single-recipient sends over BENCH_CONNECTIONS connections, until
 *   delivered, no stream connected;
 * - `streams`: the same load with BENCH_STREAMS (10) clients on GET /v1/events/stream (the client
 *   library's reader, in this process) and one more client that stops reading after connecting.
 * Reported per phase: delivered/s and accepted requests/s; the ratio streams/base (medians over
 * rounds); per stream client the MAIL_DELIVERED events received and the delivery lag (arrival
 * here minus the event's `event_at`) p50/p99; the gateway's CPU-ms per email and RSS; whether the
 * reader that stopped was dropped (the gateway's mailyard_event_stream_clients_dropped_total).
 *
 *   BENCH_EMAILS (2000), BENCH_CONNECTIONS (50), BENCH_STREAMS (10), BENCH_ROUNDS (2), BENCH_WARMUP (200),
 *   BENCH_GATEWAY_ENV ("A=1 B=2": gateway settings, e.g. EVENTS_STREAM_CLIENT_BUFFER=256kb)
 */
import { connect } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Mailyard } from '@mailyard/client';
import { closeContext } from '@mailyard/platform';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import autocannon from 'autocannon';
import {
  DOMAIN,
  type Service,
  benchClient,
  singleBody,
  spawnBootstrapGateway,
  spawnService,
  stopService,
  waitDelivered,
} from '../send/pipeline';
import { cpuMsOf, processTree } from '../support/cpu';
import { envList, memory, printAndKeep, runMain } from '../support/proc';
import {
  benchServiceEnv,
  bootstrapTenantId,
  createBenchServers,
  openHarnessContext,
} from '../support/servers';
import { migrateAsServices, servicesForm } from '../support/services';

const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const KEY = 'bench-events-stream-key-0123456789';

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : 0;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : 0;
};

/** A stream client of the client library, counting MAIL_DELIVERED and its lag. */
function streamClient(client: Mailyard) {
  const abort = new AbortController();
  const lags: number[] = [];
  let other = 0;
  let connected = false;
  let failure: string | undefined;
  const done = (async () => {
    try {
      const it = client.events.stream({ signal: abort.signal });
      connected = true;
      for await (const { event } of it) {
        if (event.event === 'MAIL_DELIVERED') lags.push(Date.now() - Date.parse(event.details.event_at));
        else other++;
      }
    } catch (err) {
      failure = (err as Error).message;
    }
  })();
  return {
    lags,
    get connected() {
      return connected;
    },
    other: () => other,
    failure: () => failure,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

/** A client that sends the request and then never reads: the gateway must drop it. */
function stalledReader(port: number) {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => {});
  s.write(`GET /v1/events/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
  s.pause();
  return s;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm')))
    sum += Number(m[1]);
  return sum;
}

async function main(): Promise<void> {
  const stamp = Date.now();
  const servers = await createBenchServers();
  const { db } = servers;
  const sink = await startSmtpSink({ backlog: 1024 });
  const stores = { ...benchServiceEnv(servers), OUTBOX_RETENTION_MS: '0' };
  await migrateAsServices(db.url);
  const ctx = await openHarnessContext(stores);
  const pgc = await benchClient(db.url);
  const services: Service[] = [];
  try {
    services.push(
      await spawnService(
        'send-1',
        'send',
        { ...stores, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}` },
        null,
        /Mailyard send started/,
      ),
    );
    const { gateway, port: gwPort } = await spawnBootstrapGateway(
      stores,
      KEY,
      { EVENTS_STREAM_MAX_PER_TENANT: String(STREAMS + 5), ...envList(process.env.BENCH_GATEWAY_ENV) },
      null,
    );
    services.push(gateway);
    const tenantId = await bootstrapTenantId(ctx, KEY);
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
      domain: DOMAIN,
      key: dkimKeyPair(),
    });
    const base = `http://127.0.0.1:${gwPort}`;
    const api = new Mailyard({ apiKey: KEY, basePath: base });
    let n = 0;
    let expected = 0;
    const load = async (amount: number) => {
      const r = await autocannon({
        url: `${base}/v1/email/send`,
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        connections: CONNECTIONS,
        amount,
        requests: [{ setupRequest: (req) => ({ ...req, body: singleBody(mailerId, n++) }) }],
      });
      return r;
    };
    const gatewayCpuMs = () =>
      processTree(gateway.proc.child.pid!).reduce((sum, pid) => sum + (cpuMsOf(pid) ?? 0), 0);

    await load(WARMUP);
    expected = WARMUP;
    await waitDelivered(pgc, tenantId, expected, 120_000);
    await pgc.query('ANALYZE');

    const phases: Record<string, unknown>[] = [];
    // Stops reading after its request, from the first streams phase to the end of the run: its
    // unread events pile up (kernel socket buffers first, then the gateway's per-client cap).
    let stalled: ReturnType<typeof stalledReader> | null = null;
    const dropped0 = await metric(gateway.metricsUrl, 'mailyard_event_stream_clients_dropped_total');
    let streamedToStalled = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of ['base', 'streams'] as const) {
        const clients = mode === 'streams' ? Array.from({ length: STREAMS }, () => streamClient(api)) : [];
        if (mode === 'streams' && !stalled) stalled = stalledReader(gwPort);
        if (mode === 'streams') {
          const until = Date.now() + 30_000;
          const dropped =
            (await metric(gateway.metricsUrl, 'mailyard_event_stream_clients_dropped_total')) > dropped0;
          while (
            (await metric(gateway.metricsUrl, 'mailyard_event_streams_connected')) <
            STREAMS + (dropped ? 0 : 1)
          ) {
            if (Date.now() > until) throw new Error('the stream clients did not connect');
            await new Promise((res) => setTimeout(res, 50));
          }
        }
        const cpu0 = gatewayCpuMs();
        const t0 = Date.now();
        const result = await load(EMAILS);
        const acceptSeconds = (Date.now() - t0) / 1000;
        expected += result['2xx'];
        await waitDelivered(pgc, tenantId, expected, 600_000);
        const seconds = (Date.now() - t0) / 1000;
        const cpuMs = gatewayCpuMs() - cpu0;
        // Every MAIL_DELIVERED of the phase on every client (bounded wait: they are live already).
        const until = Date.now() + 60_000;
        while (clients.some((c) => c.lags.length < result['2xx']) && Date.now() < until)
          await new Promise((res) => setTimeout(res, 50));
        const lags = clients.flatMap((c) => c.lags);
        const dropped =
          (await metric(gateway.metricsUrl, 'mailyard_event_stream_clients_dropped_total')) - dropped0;
        if (mode === 'streams' && dropped === 0) streamedToStalled += result['2xx'];
        for (const c of clients) await c.stop();
        phases.push({
          round: r + 1,
          mode,
          emails: result['2xx'],
          non2xx: result.non2xx,
          delivered_per_sec: Math.round(result['2xx'] / seconds),
          accepted_per_sec: Math.round(result['2xx'] / acceptSeconds),
          accept_p99_ms: result.latency.p99,
          gateway_cpu_ms_per_email: round(cpuMs / result['2xx'], 3),
          gateway_rss_mb: memory(gateway.proc.child.pid!).rssMb,
          ...(mode === 'streams'
            ? {
                stream_clients: STREAMS,
                delivered_events_per_client: clients.map((c) => c.lags.length),
                every_client_got_every_delivery: clients.every((c) => c.lags.length >= result['2xx']),
                delivery_lag_ms: { p50: pct(lags, 50), p99: pct(lags, 99), max: pct(lags, 100) },
                client_failures: clients.map((c) => c.failure()).filter(Boolean),
                stalled_reader:
                  dropped >= 1 ? 'dropped' : `connected, ${streamedToStalled} events unread so far`,
              }
            : {}),
        });
        process.stderr.write(`${JSON.stringify(phases.at(-1))}\n`);
      }
    }
    stalled?.destroy();
    const of = (mode: string, k: string) => phases.filter((p) => p.mode === mode).map((p) => p[k] as number);
    const report = {
      benchmark: 'events-stream',
      at: new Date(stamp).toISOString(),
      machine: { cpus: cpus().length, loadavg_at_start: loadavg().map((l) => round(l)) },
      note: 'stream clients and autocannon run in the benchmark process, on the same machine as the services',
      settings: { emails: EMAILS, connections: CONNECTIONS, streams: STREAMS, rounds: ROUNDS },
      gateway_env: envList(process.env.BENCH_GATEWAY_ENV),
      ...servicesForm(),
      ratio_streams_to_base: {
        delivered_per_sec: round(
          median(of('streams', 'delivered_per_sec')) / median(of('base', 'delivered_per_sec')),
          3,
        ),
        accepted_per_sec: round(
          median(of('streams', 'accepted_per_sec')) / median(of('base', 'accepted_per_sec')),
          3,
        ),
        gateway_cpu_ms_per_email: round(
          median(of('streams', 'gateway_cpu_ms_per_email')) / median(of('base', 'gateway_cpu_ms_per_email')),
          3,
        ),
      },
      phases,
    };
    printAndKeep('events-stream', report, stamp);
  } finally {
    for (const s of services.reverse()) await stopService(s).catch(() => {});
    await pgc.end().catch(() => {});
    await closeContext(ctx);
    await sink.stop();
    await servers.drop();
  }
}

runMain(main, { exit: true });
