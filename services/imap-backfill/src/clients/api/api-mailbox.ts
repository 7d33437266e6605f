/**
 * What the API mailboxes (Gmail, Graph) share: provider errors turned into MailboxError kinds
 * (provider-errors.ts) at the interface, per-message requests `concurrency` at once with a
 * message deleted meanwhile (404) left out (concurrent.ts), polling for live mail, and nothing
 * to close (HTTP, no session). Ids name a message in the whole mailbox.
 */
import { mapConcurrent } from './concurrent';
import { pause } from './live-cursor';
import type { ApiMailboxOptions } from './options';
import { isGone, toMailboxError } from './provider-errors';

export abstract class ApiMailbox {
  readonly idScope = 'mailbox';

  protected constructor(
    /** Names the provider in errors ("Gmail API", "Microsoft Graph"). */
    private readonly source: string,
    protected readonly options: ApiMailboxOptions,
  ) {}

  /** Runs `fn`, its provider errors as MailboxError. */
  protected async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toMailboxError(err, this.source);
    }
  }

  /** `get` of each item, `concurrency` at once, results as they come; gone messages left out. */
  protected async *each<T, R>(items: readonly T[], get: (item: T) => Promise<R>): AsyncGenerator<R> {
    try {
      yield* mapConcurrent(items, this.options.concurrency, async (item) => {
        try {
          return await get(item);
        } catch (err) {
          if (isGone(err)) return null;
          throw err;
        }
      });
    } catch (err) {
      throw toMailboxError(err, this.source);
    }
  }

  waitForChange(pollMs: number, signal: AbortSignal): Promise<void> {
    return pause(pollMs, signal);
  }

  async close(): Promise<void> {}
}
