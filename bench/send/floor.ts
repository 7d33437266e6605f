/**
 * The measured floor of a delivered email (issue 14): the send service's own per-copy code in
 * this process, with no database and no bus, every copy rendered, phishing-checked, built,
 * DKIM-signed (RSA-2048) and written over SMTP through the service's own transport (RelayTransport
 * -> PoolCache -> SmtpPool, SEND_POOL_CONNECTIONS pooled connections, a VERP envelope per
 * recipient as for a domain mailer) to Postfix's smtp-sink, `concurrency` copies in flight as
 * the consumer's prefetch has them. The code is BENCH_SERVICES_ROOT's when set (send-code.ts). The copies are those of batch sends (a copy per recipient, a
 * substitution in subject and bodies).
 *
 * Reported: this process's CPU per email (user + system, the libuv pool's RSA signatures
 * included) and the emails per second two cores could deliver at that cost: what any pipeline
 * around this code (bus, database, gateway) can at best approach. A second pass writes one
 * already-signed message N times through the same pool: the SMTP client's share of the floor.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  SendRequestSchema,
  type StoredSendRequest,
  planCopies,
  substitutionsFor,
  ulid,
} from '@mailyard/contracts';
import type { DkimKeyPair } from '@mailyard/testkit/fixtures';
import type { CpuMeter } from '../support/cpu';
import { sendCode } from './send-code';

export interface FloorOptions {
  /** A batch send's JSON body (`i`: which send) with `recipients` copies. */
  body: (i: number) => string;
  key: DkimKeyPair;
  domain: string;
  /** smtp-sink's port on 127.0.0.1. */
  sinkPort: number;
  emails: number;
  recipients: number;
  /** Copies in flight (the consumer's SEND_CONCURRENCY). */
  concurrency: number;
  /** Pooled SMTP connections (SEND_POOL_CONNECTIONS). */
  connections: number;
  /** Other processes measured over the full pass (e.g. the smtp-sink): their CPU per email. */
  peers?: CpuMeter;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const round = (n: number, d = 3) => Number(n.toFixed(d));

/** Runs `work(i)` for i in [0, n) with `concurrency` in flight. */
async function inFlight(n: number, concurrency: number, work: (i: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < n) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker));
}

/** CPU ms, wall seconds and event-loop utilization of `fn`. */
async function measure(fn: () => Promise<void>) {
  const elu0 = performance.eventLoopUtilization();
  const c0 = cpuMs();
  const t0 = performance.now();
  await fn();
  const seconds = (performance.now() - t0) / 1000;
  return { cpuMs: cpuMs() - c0, seconds, elu: performance.eventLoopUtilization(elu0).utilization };
}

export async function floorCost(o: FloorOptions) {
  const {
    buildMessage,
    checkPhishingAsync,
    dkimSign,
    envelopesFor,
    renderCopy,
    PoolCache,
    RelayTransport,
    sliced,
  } = await sendCode();
  const sends = Math.ceil(o.emails / o.recipients);
  // The parsed requests and their copy plans are the send's, not the copy's: made before measuring.
  const copies = Array.from({ length: sends }, (_, i) => {
    const request = SendRequestSchema.parse(JSON.parse(o.body(i))) as StoredSendRequest;
    return planCopies(request, ulid()).map((plan) => ({ request, plan }));
  }).flat();
  const dkim = { domainName: o.domain, keySelector: 'mailyard', privateKeyPem: o.key.privateKeyPem };
  const returnPath = { key: randomBytes(32), bounceDomain: 'bounces.mailyard.bench' };
  const pools = new PoolCache({ deliveryTimeoutMs: 120_000, source: sliced });
  const relay = new RelayTransport(pools, {
    url: `smtp://127.0.0.1:${o.sinkPort}`,
    timeoutMs: 30_000,
    maxConnections: o.connections,
    clientName: 'mailyard.bench',
  });
  let failed = 0;
  let failure = '';
  const deliver = async (envelope: { from: string; to: string[] }, raw: Buffer) => {
    for (const r of await relay.deliver(envelope, raw)) {
      if (r.ok) continue;
      failed++;
      failure ||= `${r.failure.failedReason} ${r.failure.providerError}`;
    }
  };
  /** One copy as consumer.ts sendCopy handles it, without the database and the bus. */
  const one = async (i: number) => {
    const { request, plan } = copies[i % copies.length]!;
    const to = plan.recipients.find((r) => r.type === 'to')!;
    const rendered = renderCopy(request, substitutionsFor(request, to.email));
    const verdict = await checkPhishingAsync(rendered, { blocklist: [], budgetMs: 2_000, maxLinks: 10_000 });
    if (verdict) throw new Error(`the floor's copy was flagged: ${verdict.reason}`);
    const built = await buildMessage({
      request,
      recipients: plan.recipients,
      rendered,
      copyId: plan.copy_id,
      serviceDomain: 'mailyard.bench',
    });
    const raw = await dkimSign(built.raw, dkim);
    const envelopes = envelopesFor(
      { kind: 'domain' },
      plan.copy_id,
      request.from.email,
      plan.recipients.map((r) => r.email),
      returnPath,
    );
    await Promise.all(envelopes.map((e) => deliver(e, raw)));
  };
  try {
    // Warm-up: JIT, the key cache and the pool's connections.
    await inFlight(Math.min(500, o.emails), o.concurrency, one);
    await o.peers?.start();
    const full = await measure(() => inFlight(o.emails, o.concurrency, one));
    const peers = await o.peers?.stop();
    const sample = copies[0]!;
    const signed = await dkimSign(
      (
        await buildMessage({
          request: sample.request,
          recipients: sample.plan.recipients,
          rendered: renderCopy(sample.request, {}),
          copyId: sample.plan.copy_id,
          serviceDomain: 'mailyard.bench',
        })
      ).raw,
      dkim,
    );
    const to = sample.plan.recipients[0]!.email;
    // A new envelope per message: nodemailer's SMTPConnection records its progress on the object.
    const smtp = await measure(() =>
      inFlight(o.emails, o.concurrency, () =>
        deliver({ from: `bounce@${returnPath.bounceDomain}`, to: [to] }, signed),
      ),
    );
    if (failed > 0) throw new Error(`${failed} deliveries to smtp-sink failed: ${failure}`);
    const perEmail = full.cpuMs / o.emails;
    return {
      note: 'the send service code alone (no database, no bus) in this process: render, phishing check, MIME, DKIM, SMTP to smtp-sink over pooled connections',
      emails: o.emails,
      concurrency: o.concurrency,
      smtp_connections: o.connections,
      message_bytes: signed.length,
      cpu_ms_per_email: round(perEmail),
      // What two cores could do if they did nothing else: the ceiling any pipeline around it has.
      two_core_emails_per_sec_at_this_cost: Math.round(2000 / perEmail),
      delivered_per_sec_one_process: Math.round(o.emails / full.seconds),
      event_loop_utilization: round(full.elu, 2),
      ...(peers
        ? {
            peer_cpu_ms_per_email: Object.fromEntries(
              Object.entries(peers).map(([k, v]) => [k, round(v / o.emails)]),
            ),
          }
        : {}),
      smtp_write_only: {
        note: 'one signed message written N times through the same pool: the SMTP client share',
        cpu_ms_per_email: round(smtp.cpuMs / o.emails),
        delivered_per_sec_one_process: Math.round(o.emails / smtp.seconds),
      },
    };
  } finally {
    pools.closeAll();
  }
}
