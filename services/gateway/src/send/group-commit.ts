/**
 * Group commit of accepted sends: concurrent POST /v1/email/send requests share their database
 * round trips. What each request reads (its mailer's status and template) is loaded for all
 * requests waiting at that moment in one query, and what each writes (the send, its QUEUED log
 * rows, its outbox rows) is inserted for all of them in ONE statement (libs/store
 * sends.insertAcceptedBatch), so a busy gateway commits once per batch instead of once per send.
 *
 * Durability does not change: a request is answered only after the statement holding its send
 * committed (each call resolves after its batch's commit). Failure isolation: the statement is
 * all or nothing; when it fails on the data (an SQLSTATE of class 22 or 23: a value or constraint
 * one send's rows break), every send of the batch is written again alone, so only the sends whose
 * own write fails get an error (the others are committed and answered 200). Any other failure
 * (database unreachable, timeout) is every send's, and fails the batch at once. A batch holds at
 * most MAX_ROWS rows (a 1,000-recipient send is a batch of its own).
 * Sends with an Idempotency-Key do not come here (accept-send.ts writes them one by one, with the
 * key's checks in their transaction).
 */
import { BatchItemError, Batcher, type Db, histogram, isDataError } from '@mailyard/platform';
import { type AcceptContextKey, type AcceptedSendRows, type SendAcceptContext, sends } from '@mailyard/store';

const batchSize = histogram(
  'mailyard_send_accept_batch_size',
  'Sends written by one group-commit statement',
  [],
  [1, 2, 5, 10, 20, 50, 100],
);

export interface GroupCommitOptions {
  /** Most sends per statement (and contexts per read). */
  maxBatch?: number;
}

/** Most rows (sends, log rows, outbox rows) one statement writes. */
export const MAX_ROWS = 5_000;

const rowsOf = (s: AcceptedSendRows) => 1 + s.recipients.length + s.outbox.length;

export class SendGroupCommit {
  private readonly contexts: Batcher<AcceptContextKey, SendAcceptContext>;
  private readonly writes: Batcher<AcceptedSendRows, undefined>;

  constructor(db: Db, opts: GroupCommitOptions = {}) {
    const maxBatch = opts.maxBatch ?? 100;
    this.contexts = new Batcher((keys) => loadContexts(db, keys), maxBatch);
    this.writes = new Batcher((batch) => writeBatch(db, batch), maxBatch, {
      weigh: rowsOf,
      maxWeight: MAX_ROWS,
    });
  }

  /** The mailer's status and the template for one send, read with the other waiting sends'. */
  context(key: AcceptContextKey): Promise<SendAcceptContext> {
    return this.contexts.submit(key);
  }

  /** Resolves once the send is committed; rejects when its own write failed. */
  write(rows: AcceptedSendRows): Promise<void> {
    return this.writes.submit(rows);
  }
}

/** One query for the distinct (tenant, mailer, template) keys of the batch. */
async function loadContexts(db: Db, keys: AcceptContextKey[]): Promise<SendAcceptContext[]> {
  const id = (k: AcceptContextKey) => `${k.tenantId}\u0000${k.mailerId}\u0000${k.templateId ?? ''}`;
  const distinct = new Map<string, AcceptContextKey>();
  for (const k of keys) if (!distinct.has(id(k))) distinct.set(id(k), k);
  const unique = [...distinct.values()];
  const loaded = await sends.acceptContexts(db, unique);
  const byId = new Map(unique.map((k, i) => [id(k), loaded[i]!]));
  return keys.map((k) => byId.get(id(k))!);
}

async function writeBatch(db: Db, batch: AcceptedSendRows[]): Promise<Array<undefined | BatchItemError>> {
  batchSize.observe(batch.length);
  try {
    await sends.insertAcceptedBatch(db, batch);
    return batch.map(() => undefined);
  } catch (err) {
    if (batch.length === 1 || !isDataError(err)) throw err;
    // Nothing of the batch was written (one statement): each send alone, so one bad send fails only itself.
    return Promise.all(
      batch.map((rows) =>
        sends.insertAcceptedBatch(db, [rows]).then(
          () => undefined,
          (own: unknown) => new BatchItemError(own),
        ),
      ),
    );
  }
}
