/**
 * The attach lifecycle every AMQP channel holder of the bus shares (AmqpConsumer for work queues,
 * AmqpSubscription for transient subscriptions): one channel per holder, opened on a link by
 * `open`; `attach` is idempotent per link (a second call while opening waits for the first);
 * `attachLater` retries a failed attach on the same live link with capped back-off (200 ms
 * doubling up to 30 s; a reconnect re-attaches on the new link anyway); `detach` forgets a lost
 * link's channel. Subclasses say how to open, what to log, and how to cancel.
 */
import type { Channel } from 'amqplib';
import type { Logger } from '../../logger/logger';
import { backoffMs } from '../../retry/backoff';
import { errorMessage } from '../delivery';
import type { Link } from './connection';

/** Gap before attaching again after a channel failed: 200 ms doubling up to 30 s. */
const REATTACH = { minMs: 200, maxMs: 30_000, maxDoublings: 8 };

export abstract class ReattachingChannel {
  protected channel: Channel | null = null;
  protected cancelled = false;
  private attachedTo: Link | null = null;
  private attaching: Promise<void> | null = null;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  /** Opens the channel on `link` and starts consuming; calls `attached()` once it does. */
  protected abstract open(link: Link): Promise<void>;
  protected abstract readonly log: Logger;
  /** The warning logged when an attach is retried, and the fields that name this holder. */
  protected abstract readonly retryWarning: string;
  protected abstract logFields(): Record<string, unknown>;

  /** Opens a channel on `link` and starts consuming. Idempotent per link. */
  attach(link: Link): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    if (this.attachedTo === link && (this.channel || this.attaching))
      return this.attaching ?? Promise.resolve();
    this.attachedTo = link;
    const attaching = this.open(link).finally(() => {
      if (this.attaching === attaching) this.attaching = null;
    });
    this.attaching = attaching;
    return attaching;
  }

  /** The connection is gone; its channel (and unacked deliveries) with it. */
  detach(link: Link): void {
    if (this.attachedTo !== link) return;
    this.channel = null;
    this.attachedTo = null;
    this.detached();
  }

  /** Retries attaching on a live connection with capped backoff (a reconnect also re-attaches). */
  attachLater(link: Link, reason: string): void {
    if (this.cancelled || link.lost || this.retryTimer) return;
    const wait = backoffMs(this.retries++, REATTACH);
    this.log.warn(this.retryWarning, { ...this.logFields(), reason, retry_in_ms: wait });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.cancelled || link.lost) return;
      this.attach(link).catch((err) => this.attachLater(link, errorMessage(err)));
    }, wait);
  }

  /** A hook for what else a lost link takes with it. */
  protected detached(): void {}

  /** The channel is consuming: the next failure starts the back-off from the beginning. */
  protected attached(): void {
    this.retries = 0;
  }

  /** Marks the holder cancelled, stops retrying and waits out an attach under way. */
  protected async stopAttaching(): Promise<void> {
    this.cancelled = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.attaching) await this.attaching.catch(() => {});
  }
}

/**
 * Attaches `holders` to a new connection; any that fail keep retrying on their own
 * (attachLater). Returns how many failed.
 */
export async function attachEach(holders: ReattachingChannel[], link: Link): Promise<number> {
  const results = await Promise.allSettled(holders.map((h) => h.attach(link)));
  let failed = 0;
  results.forEach((r, i) => {
    if (r.status !== 'rejected') return;
    failed++;
    holders[i]!.attachLater(link, errorMessage(r.reason));
  });
  return failed;
}
