/**
 * A wall-clock bound for an IMAP command. imapflow bounds connecting, the greeting and socket
 * silence, but not how long a command may go on: a server that keeps talking (untagged lines,
 * FETCH rows nobody asked for) and never sends the tagged answer holds the command, and every
 * command queued behind it, forever. On expiry the caller's `onExpire` closes the connection,
 * so nothing stays queued behind the command and the server's stream is no longer read.
 */
export class ImapDeadlineError extends Error {
  override name = 'ImapDeadlineError';
  readonly code = 'IMAP_DEADLINE';
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} got no answer within ${ms} ms`);
  }
}

/**
 * Settles as `work`, or rejects with ImapDeadlineError when `ms` pass first and then runs
 * `onExpire`. A rejection of `work` after the deadline is not left unhandled.
 */
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onExpire: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ImapDeadlineError(what, ms));
      onExpire();
    }, ms);
  });
  work.catch(() => {});
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
