/**
 * SMTP connection pools (SmtpPool), one per destination (relay, MX host + address, or SMTP
 * mailer configuration), reused across messages. Pools unused for `evictAfterMs` are closed and
 * forgotten.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { type SmtpErrorLike, classifyReply, classifySmtpError } from './classify-smtp-error';
import type { Envelope, RecipientResult } from './delivery';
import { SmtpPool, type SmtpPoolOptions } from './smtp-pool';

/** Connection settings of a destination; the pool adds the delivery deadline. */
export type DestinationOptions = Omit<SmtpPoolOptions, 'deliveryTimeoutMs' | 'source'>;

interface Entry {
  pool: SmtpPool;
  lastUsed: number;
}

export interface PoolCacheOptions {
  /** Overall deadline of one delivery, queueing for a connection included. */
  deliveryTimeoutMs: number;
  evictAfterMs?: number;
  /** How every pool hands a message to the data stream (SmtpPoolOptions.source). */
  source?: (raw: Buffer) => Buffer | Readable;
}

export class PoolCache {
  private readonly pools = new Map<string, Entry>();
  private readonly timer: NodeJS.Timeout;
  private readonly evictAfterMs: number;

  constructor(private readonly o: PoolCacheOptions) {
    this.evictAfterMs = o.evictAfterMs ?? 300_000;
    this.timer = setInterval(() => this.evict(), Math.min(60_000, this.evictAfterMs));
    this.timer.unref();
  }

  get size(): number {
    return this.pools.size;
  }

  /** The pool for `key`, created with `options` the first time. */
  get(key: string, options: () => DestinationOptions): SmtpPool {
    let entry = this.pools.get(key);
    if (!entry) {
      entry = {
        pool: new SmtpPool({
          ...options(),
          deliveryTimeoutMs: this.o.deliveryTimeoutMs,
          ...(this.o.source ? { source: this.o.source } : {}),
        }),
        lastUsed: Date.now(),
      };
      this.pools.set(key, entry);
    }
    entry.lastUsed = Date.now();
    return entry.pool;
  }

  /**
   * Sends `raw` as is (already built and signed) to the envelope; one result per recipient.
   * `deadline` (epoch ms) caps this delivery below the pool's own deadline.
   */
  async send(pool: SmtpPool, envelope: Envelope, raw: Buffer, deadline?: number): Promise<RecipientResult[]> {
    try {
      const info = await pool.send(envelope, raw, deadline);
      const rejected = new Set((info.rejected ?? []).map((r) => r.toLowerCase()));
      return envelope.to.map((email) =>
        rejected.has(email.toLowerCase())
          ? { email, ok: false, failure: failureFor(email, info.rejectedErrors) }
          : { email, ok: true, response: info.response ?? '' },
      );
    } catch (err) {
      const e = err as SmtpErrorLike & { rejectedErrors?: SmtpErrorLike[] };
      if (e.command === 'RCPT TO' && e.rejectedErrors?.length) {
        return envelope.to.map((email) => ({
          email,
          ok: false,
          failure: failureFor(email, e.rejectedErrors) ?? classifySmtpError(err),
        }));
      }
      const failure = classifySmtpError(err);
      return envelope.to.map((email) => ({ email, ok: false, failure }));
    }
  }

  /** Closes every pool (idle connections at once, busy ones when their message is done). */
  closeAll(): void {
    clearInterval(this.timer);
    for (const entry of this.pools.values()) entry.pool.close();
    this.pools.clear();
  }

  private evict(): void {
    const cutoff = Date.now() - this.evictAfterMs;
    for (const [key, entry] of this.pools) {
      if (entry.lastUsed < cutoff) {
        entry.pool.close();
        this.pools.delete(key);
      }
    }
  }
}

function failureFor(email: string, errors: SmtpErrorLike[] | undefined) {
  const e = errors?.find(
    (x) => (x as { recipient?: string }).recipient?.toLowerCase() === email.toLowerCase(),
  );
  if (!e) return classifySmtpError(new Error('Recipient rejected'));
  return e.responseCode && e.response
    ? classifyReply(e.responseCode, e.response, e.command)
    : classifySmtpError(e);
}

/** A stable key for secrets-bearing settings (the secret itself never appears in the key). */
export function settingsKey(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}
