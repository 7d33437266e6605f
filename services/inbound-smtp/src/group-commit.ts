/**
 * The MX service's database round trips, shared by whatever waits at the same moment (libs/
 * platform Batcher: a batch starts on the next turn with every call made until then, calls made
 * while it runs go into the next one, so batches grow with the load and a lone call waits one
 * turn). Each round trip on loopback costs the process a write system call and PostgreSQL a
 * statement (and for writes a commit); with many concurrent sessions they were most of the MX
 * process's CPU per message besides the SMTP replies themselves.
 * - routes: the RCPT TO lookups of all sessions, one query (store findInboundRoutes);
 * - store: GROUP COMMIT of accepted messages, one statement for the messages (store
 *   inboundMessages.storeBatch, without bus announcements: the MX processes what it stored itself
 *   and the recovery sweep finds what it did not finish, recovery-sweep.ts). Durability does not change: each call
 *   resolves only after the statement holding its message committed, and server.ts answers 250
 *   only then. When the statement fails on the data (SQLSTATE class 22 or 23: one message's
 *   values), every message of the batch is written again alone, so only the message at fault
 *   gets its 451; any other failure (database unreachable) is every message's. A batch holds at
 *   most MAX_BATCH_BYTES of raw messages (a larger message is a batch of its own);
 * - load / complete: the bus consumer's read of a stored message and its final statement (mark
 *   processed + deliveries for the dispatcher; the bounce/complaint path keeps its own
 *   transaction), one statement each for the messages the consumer works on at once (prefetch).
 */
import { BatchItemError, Batcher, type Db, isDataError } from '@mailyard/platform';
import {
  type InboundRoute,
  type NewDelivery,
  type NewInboundMessage,
  type StoredInboundMessage,
  findInboundRoutes,
  inboundMessages,
} from '@mailyard/store';

/** Most raw message bytes one group-commit statement writes. */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;

export interface InboundRoundTrips {
  route(domain: string, username: string): Promise<InboundRoute | null>;
  /** Resolves with the message's id once it is committed; rejects when its own write failed. */
  store(msg: NewInboundMessage): Promise<string>;
  load(id: string): Promise<StoredInboundMessage | null>;
  /** Marks the message processed with its deliveries; false when it was already processed. */
  complete(id: string, deliveries: NewDelivery[]): Promise<boolean>;
}

export function inboundRoundTrips(db: Db, maxBatch = 100): InboundRoundTrips {
  const routes = new Batcher(
    (keys: Array<{ domain: string; username: string }>) => findInboundRoutes(db, keys),
    maxBatch,
  );
  const stores = new Batcher((msgs: NewInboundMessage[]) => storeBatch(db, msgs), maxBatch, {
    weigh: (m) => m.raw.length,
    maxWeight: MAX_BATCH_BYTES,
  });
  const loads = new Batcher((ids: string[]) => inboundMessages.getMany(db, ids), maxBatch);
  const completes = new Batcher(
    (items: Array<{ id: string; deliveries: NewDelivery[] }>) => inboundMessages.completeBatch(db, items),
    maxBatch,
  );
  return {
    route: (domain, username) => routes.submit({ domain, username }),
    store: (msg) => stores.submit(msg),
    load: (id) => loads.submit(id),
    complete: (id, deliveries) => completes.submit({ id, deliveries }),
  };
}

async function storeBatch(db: Db, msgs: NewInboundMessage[]): Promise<Array<string | BatchItemError>> {
  try {
    return await inboundMessages.storeBatch(db, msgs, { announce: false });
  } catch (err) {
    if (msgs.length === 1 || !isDataError(err)) throw err;
    // Nothing of the batch was written (one statement): each message alone, so one bad message fails only itself.
    return Promise.all(
      msgs.map((m) =>
        inboundMessages.storeBatch(db, [m], { announce: false }).then(
          ([id]) => id!,
          (own: unknown) => new BatchItemError(own),
        ),
      ),
    );
  }
}
