/**
 * Runs delivery attempts from the webhook_deliveries table (the persisted schedule):
 * - claims due rows (fresh batches at once through `poll`, retries by polling every pollMs),
 *   at most `concurrency` in flight per process and `endpointConcurrency` per webhook: the
 *   claim takes per endpoint what it may run plus as many to start the moment a slot frees
 *   (within the lease: an attempt ends within the timeout), so one slow receiver only ever
 *   waits on itself, a large backlog for one endpoint is never claimed and released, and no
 *   claim round trip sits between two attempts of a busy endpoint;
 * - reads the target fresh for every claim (the claim statement returns it with the rows; its
 *   sealed headers and secret are opened once per process, unseal-cache.ts; a deleted or
 *   deactivated webhook drops the delivery with a record saying so), delivers, and records the
 *   attempt with the next state (outcomes of concurrent attempts in one statement, recorder.ts):
 *   delivered, retrying at now + schedule delay (with jitter), or dropped once the schedule is
 *   used up.
 * A crash between claim and record leaves the row due again after the lease: at-least-once.
 */
import { type Logger, type Queryable, type Sealer, childTraceparent } from '@mailyard/platform';
import {
  type AttemptRecord,
  type DueDelivery,
  claimDueDeliveries,
  dropDelivery,
  recordDeliveryAttempts,
  releaseClaimedDeliveries,
} from '@mailyard/store';
import type { DeliveryRequest, DeliveryResult } from './deliver';
import { attemptLatency, attempts } from './metrics';
import { GroupWriter } from './recorder';
import { nextRetryDelayMs, retryWindowMs, retryWindowS } from './schedule';
import type { DispatcherSettings } from './settings';
import { UnsealCache } from './unseal-cache';

interface Target {
  url: string;
  method: string;
  headers: Record<string, string>;
  secret: string | null;
}

export interface WorkerDeps {
  db: Queryable;
  sealer: Sealer;
  logger: Logger;
  settings: DispatcherSettings;
  deliver: (req: DeliveryRequest) => Promise<DeliveryResult>;
  random?: () => number;
}

export class DeliveryWorker {
  private readonly perEndpoint = new Map<string, number>();
  /** Claimed rows waiting for a slot of their endpoint, with the target read at claim time. */
  private readonly queued = new Map<string, Array<{ row: DueDelivery; target: Target | string }>>();
  private readonly running = new Set<Promise<void>>();
  private inFlight = 0;
  private pollTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private claiming: Promise<void> | null = null;
  private again = false;

  /** Attempt outcomes, written together (group commit). */
  private readonly records: GroupWriter<AttemptRecord>;
  private readonly unsealed: UnsealCache;

  constructor(private readonly deps: WorkerDeps) {
    this.unsealed = new UnsealCache((sealed) => deps.sealer.openText(sealed));
    this.records = new GroupWriter(
      (items) => recordDeliveryAttempts(deps.db, items),
      (err, items) =>
        deps.logger.error('recording webhook attempts failed; they are attempted again after the lease', {
          err,
          deliveries: items.length,
        }),
    );
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.poll();
      this.pollTimer = setTimeout(tick, this.deps.settings.pollMs);
    };
    tick();
  }

  /** New due deliveries exist (a flushed batch, a replay): claim now instead of at the next poll. */
  poll(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claimAndRun()
      .catch((err) => void this.deps.logger.error('claiming webhook deliveries failed', { err }))
      .finally(() => {
        this.claiming = null;
        if (this.again) {
          this.again = false;
          this.poll();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    await this.claiming;
    // Claimed but not started: due again at once for whoever runs next.
    const waiting = [...this.queued.values()].flat().map((q) => q.row.id);
    this.queued.clear();
    await releaseClaimedDeliveries(this.deps.db, waiting).catch(() => {});
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.records.drain();
  }

  /** Per endpoint: attempts running plus claimed rows waiting for a slot. */
  private holding(): Map<string, number> {
    const out = new Map(this.perEndpoint);
    for (const [id, q] of this.queued) out.set(id, (out.get(id) ?? 0) + q.length);
    return out;
  }

  private async claimAndRun(): Promise<void> {
    const { db, settings } = this.deps;
    const waiting = [...this.queued.values()].reduce((n, q) => n + q.length, 0);
    const free = settings.concurrency - this.inFlight - waiting;
    if (free <= 0) return;
    // Per endpoint, what it may run now and as many more to start the moment a slot frees (no
    // claim round trip between two attempts); nothing is claimed just to be released.
    const rows = await claimDueDeliveries(db, {
      limit: free,
      leaseMs: settings.leaseMs,
      perTarget: 2 * settings.endpointConcurrency,
      running: this.holding(),
    });
    // The target of each endpoint is opened once per claim, not once per attempt.
    const targets = new Map<string, Target | string>();
    const release: string[] = [];
    for (const row of rows) {
      if (this.stopped) {
        release.push(row.id);
        continue;
      }
      const key = `${row.targetKind}:${row.webhookId}`;
      let target = targets.get(key);
      if (target === undefined) {
        try {
          target = this.openTarget(row);
        } catch (err) {
          // A secret sealed with another SECRET_KEY: left for the lease, retried like a failure.
          this.deps.logger.error('opening a webhook target failed', { err, webhook_id: row.webhookId });
          continue;
        }
        targets.set(key, target);
      }
      const q = this.queued.get(row.webhookId) ?? [];
      q.push({ row, target });
      this.queued.set(row.webhookId, q);
    }
    await releaseClaimedDeliveries(db, release);
    for (const id of new Set(rows.map((r) => r.webhookId))) this.startQueued(id);
    // A full claim may have left more due rows behind.
    if (rows.length === free && release.length < rows.length) this.again = true;
  }

  /** Starts claimed rows of an endpoint while it has free slots (at most endpointConcurrency run). */
  private startQueued(webhookId: string): void {
    const q = this.queued.get(webhookId);
    while (
      q &&
      q.length > 0 &&
      (this.perEndpoint.get(webhookId) ?? 0) < this.deps.settings.endpointConcurrency
    ) {
      const { row, target } = q.shift()!;
      this.perEndpoint.set(webhookId, (this.perEndpoint.get(webhookId) ?? 0) + 1);
      this.inFlight++;
      const run = this.attempt(row, target)
        .catch(
          (err) =>
            void this.deps.logger.error('webhook attempt failed unexpectedly', { err, delivery_id: row.id }),
        )
        .finally(() => {
          this.inFlight--;
          const left = (this.perEndpoint.get(webhookId) ?? 1) - 1;
          if (left <= 0) this.perEndpoint.delete(webhookId);
          else this.perEndpoint.set(webhookId, left);
          this.running.delete(run);
          if (!this.stopped) this.startQueued(webhookId);
          this.poll();
        });
      this.running.add(run);
    }
    if (q && q.length === 0) this.queued.delete(webhookId);
  }

  private async attempt(row: DueDelivery, loaded: Target | string): Promise<void> {
    const { db, settings, logger } = this.deps;
    const window = formatWindow(retryWindowS(settings.retryDelaysS));
    const tooOld =
      Date.now() - row.createdAt.getTime() > retryWindowMs(settings.retryDelaysS, settings.timeoutMs);
    const target = tooOld ? `older than the retry window (${window})` : loaded;
    if (typeof target === 'string') {
      await dropDelivery(db, row.id, target);
      attempts.inc({ result: 'dropped' });
      logger.info('webhook delivery dropped', { delivery_id: row.id, reason: target });
      return;
    }
    const attempt = row.attempts + 1;
    const at = new Date();
    const result = await this.deps
      .deliver({
        url: target.url,
        method: target.method,
        headers: target.headers,
        // The delivery's own headers (X-History-Backfill-Job-Id) beside the configured ones.
        extraHeaders: row.extraHeaders,
        body: row.body,
        deliveryId: row.id,
        secret: target.secret,
        traceparent: row.traceparent ? childTraceparent(row.traceparent) : null,
      })
      // Whatever goes wrong building or sending the request is this attempt's failure, recorded
      // and retried like any other (never an exception that leaves no attempt behind).
      .catch(
        (err: Error): DeliveryResult => ({
          ok: false,
          statusCode: null,
          latencyMs: 0,
          error: `request failed (${(err as NodeJS.ErrnoException).code ?? err.name})`,
        }),
      );
    let next: AttemptRecord['outcome']['next'];
    if (result.ok) next = { status: 'delivered' };
    else {
      const delay = nextRetryDelayMs(attempt, settings.retryDelaysS, this.deps.random);
      next =
        delay === null
          ? {
              status: 'dropped',
              reason: `retry window (${window}) used up after ${attempt} attempts`,
            }
          : { status: 'retrying', nextAttemptAt: new Date(Date.now() + delay) };
    }
    attempts.inc({ result: next.status });
    attemptLatency.observe(result.latencyMs / 1000);
    // Written with the outcomes of other attempts; the slot is free meanwhile.
    void this.records.add({
      deliveryId: row.id,
      attempt,
      outcome: { at, statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error, next },
    });
    if (!result.ok)
      logger.info('webhook attempt failed', {
        delivery_id: row.id,
        webhook_id: row.webhookId,
        attempt,
        error: result.error,
        next: next.status,
      });
  }

  /** The target as configured now (read by the claim), or why the delivery is dropped. */
  private openTarget(row: DueDelivery): Target | string {
    const t = row.target;
    if (!t)
      return row.targetKind === 'inbound'
        ? 'the incoming domain was removed'
        : row.targetKind === 'mailer'
          ? 'the mailer or its incoming webhook was removed'
          : 'the webhook was deleted';
    if (!t.active) return 'the webhook is deactivated';
    return {
      url: t.url,
      method: t.method,
      headers: t.headersSealed
        ? (JSON.parse(this.unsealed.openText(t.headersSealed)) as Record<string, string>)
        : {},
      secret: t.secretSealed ? this.unsealed.openText(t.secretSealed) : null,
    };
  }
}

function formatWindow(s: number): string {
  if (s >= 3600) return `${Math.round((s / 3600) * 10) / 10} h`;
  if (s >= 60) return `${Math.round((s / 60) * 10) / 10} min`;
  return `${s} s`;
}
