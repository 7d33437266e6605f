/**
 * Pooled nodemailer SMTP transports, one per destination (relay, MX host + address, or SMTP
 * mailer configuration), reused across messages. Connections of a pool close after
 * `idleTimeout`; pools unused for `evictAfterMs` are closed and forgotten.
 */
import { createHash } from 'node:crypto';
import nodemailer, { type Transporter, type SMTPPoolOptions } from 'nodemailer';
import { type SmtpErrorLike, classifyReply, classifySmtpError } from '../classify-smtp-error';
import type { Envelope, RecipientResult } from './types';

interface Entry {
  transporter: Transporter;
  lastUsed: number;
}

export interface PoolCacheOptions {
  /** Overall deadline of one delivery, queueing for a connection included. */
  deliveryTimeoutMs: number;
  evictAfterMs?: number;
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

  /** The pooled transport for `key`, created with `options` the first time. */
  get(key: string, options: () => SMTPPoolOptions): Transporter {
    let entry = this.pools.get(key);
    if (!entry) {
      entry = { transporter: nodemailer.createTransport({ ...options(), pool: true }), lastUsed: Date.now() };
      this.pools.set(key, entry);
    }
    entry.lastUsed = Date.now();
    return entry.transporter;
  }

  /** Sends `raw` as is (already built and signed) to the envelope; one result per recipient. */
  async send(transporter: Transporter, envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    // A plain controller + timer: AbortSignal.timeout() builds its DOMException up front, a
    // measurable cost per message at high rates.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.o.deliveryTimeoutMs);
    try {
      const info = (await transporter.sendMail({ envelope, raw, signal: deadline.signal })) as {
        rejected?: string[];
        rejectedErrors?: SmtpErrorLike[];
        response?: string;
      };
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
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes every pool (in-flight deliveries finish first). */
  closeAll(): void {
    clearInterval(this.timer);
    for (const entry of this.pools.values()) entry.transporter.close();
    this.pools.clear();
  }

  private evict(): void {
    const cutoff = Date.now() - this.evictAfterMs;
    for (const [key, entry] of this.pools) {
      if (entry.lastUsed < cutoff) {
        entry.transporter.close();
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
