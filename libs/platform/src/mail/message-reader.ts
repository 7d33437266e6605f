/**
 * Reads the DATA of one message from smtp-server's stream, holding at most `maxBytes` of it
 * and nothing past the shared budget (byte-budget.ts), pure apart from the stream:
 * - every chunk is reserved in the budget before it is held;
 * - once the message passes `maxBytes` (whether or not the client announced SIZE=) what was
 *   held is dropped at once and the rest is read and discarded: `too-big` (the caller answers
 *   552 after the final dot, as SMTP requires);
 * - when the budget cannot take a chunk, likewise: `no-budget` (452, try again later);
 * - a message read in full comes with `release()`, which gives its bytes back (the caller
 *   calls it once the message is stored or refused);
 * - a stream that fails (the client went away, a deadline destroyed it) gives everything back
 *   and rejects.
 */
import type { Readable } from 'node:stream';
import type { ByteBudget } from './byte-budget';

export type ReadOutcome =
  | { kind: 'message'; raw: Buffer; release(): void }
  | { kind: 'too-big'; bytes: number }
  | { kind: 'no-budget'; bytes: number };

export async function readMessage(
  stream: Readable,
  maxBytes: number,
  budget: ByteBudget,
): Promise<ReadOutcome> {
  let chunks: Buffer[] = [];
  let held = 0;
  let seen = 0;
  let dropped: 'too-big' | 'no-budget' | null = null;
  const drop = (why: 'too-big' | 'no-budget') => {
    dropped = why;
    budget.release(held);
    held = 0;
    chunks = [];
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (dropped) continue;
      if (held + chunk.length > maxBytes) drop('too-big');
      else if (!budget.tryReserve(chunk.length)) drop('no-budget');
      else {
        chunks.push(chunk);
        held += chunk.length;
      }
    }
  } catch (err) {
    budget.release(held);
    throw err;
  }
  if (dropped) return { kind: dropped, bytes: seen };
  const bytes = held;
  let released = false;
  return {
    kind: 'message',
    raw: Buffer.concat(chunks, bytes),
    release() {
      if (released) return;
      released = true;
      budget.release(bytes);
    },
  };
}
