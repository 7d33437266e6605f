/**
 * `last_used_at` of API keys without a database write per request: the auth step marks the key
 * id of each authenticated request in memory, and `flush` writes every key marked since the last
 * flush with one UPDATE (store markKeysUsed) every API_KEY_LAST_USED_FLUSH_MS (default 60 s).
 * Precision (docs/operations.md "API keys and scopes"): last_used_at is the time of the flush that
 * followed the use, so it trails by at most one interval; uses in the last interval before a
 * process dies are not recorded. The set holds key ids only, at most one entry per live key.
 */
import type { Db, Logger } from '@mailyard/platform';
import { markKeysUsed } from '@mailyard/store';

export class KeyUsage {
  private used = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  mark(keyId: string): void {
    this.used.add(keyId);
  }

  /** Writes the keys marked since the last flush (one UPDATE); a failed write keeps them for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.used.size === 0) return;
      const ids = [...this.used];
      this.used = new Set();
      try {
        await markKeysUsed(this.db, ids);
      } catch (err) {
        for (const id of ids) this.used.add(id);
        this.logger.warn('could not record API key use; retrying at the next flush', {
          error: (err as Error).message,
        });
      }
    });
    return this.flushing;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
