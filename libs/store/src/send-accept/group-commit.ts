/**
 * Group commit of accepted sends: concurrent POST /v1/email/send requests share their database
 * round trips. What each request reads (its mailer's status and template) is loaded for all
 * requests waiting at that moment in one query, and what each writes (the send, its QUEUED log
 * rows, the `send.email` commands of its copies) is inserted for all of them in ONE statement
 * (libs/store sends.insertAcceptedBatch), so a busy gateway commits once per batch instead of once
 * per send. The commands of the batch are built for the batch as a whole
 * (send-commands.ts sendCommands: the copies of several sends share one bus message).
 *
 * Durability does not change: a request is answered only after the statement holding its send
 * committed (each call resolves after its batch's commit). Failure isolation: the statement is
 * all or nothing; when it fails on the data (an SQLSTATE of class 22 or 23: a value or constraint
 * one send's rows break), every send of the batch is written again alone, so only the sends whose
 * own write fails get an error (the others are committed and answered 200; each written alone
 * gets commands of its own). Any other failure
 * (database unreachable, timeout) is every send's, and fails the batch at once. A batch holds at
 * most MAX_ROWS rows, counting a command per copy (a 1,000-recipient send is a batch of its own).
 * Sends with an Idempotency-Key do not come here (accept-send.ts writes them one by one, with the
 * key's checks in their transaction).
 */
import { BatchItemError, Batcher, type Db, histogram, isDataError } from '@mailyard/platform';
import type { QueuedRecipient } from '../email-logs';
import { type AcceptContextKey, type SendAcceptContext, type SendFields, sends } from '../sends';
import { type SendCopies, sendCommands } from './send-commands';

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

/** One send to write: its row, its QUEUED log rows and the copies its commands name. */
export interface GroupedSend {
  send: SendFields;
  recipients: readonly QueuedRecipient[];
  copies: SendCopies;
}

/** Most rows (sends, log rows, outbox rows) one statement writes. */
export const MAX_ROWS = 5_000;

// At most one command per copy (fewer when several copies share one).
const rowsOf = (s: GroupedSend) => 1 + s.recipients.length + s.copies.copyIds.length;

export class SendGroupCommit {
  private readonly contexts: Batcher<AcceptContextKey, SendAcceptContext>;
  private readonly writes: Batcher<GroupedSend, undefined>;

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
  write(rows: GroupedSend): Promise<void> {
    return this.writes.submit(rows);
  }
}

/** One query for the distinct (tenant, mailer, template, From domain) keys of the batch. */
async function loadContexts(db: Db, keys: AcceptContextKey[]): Promise<SendAcceptContext[]> {
  const id = (k: AcceptContextKey) =>
    `${k.tenantId}\u0000${k.mailerId}\u0000${k.templateId ?? ''}\u0000${k.fromDomain ?? ''}`;
  const distinct = new Map<string, AcceptContextKey>();
  for (const k of keys) if (!distinct.has(id(k))) distinct.set(id(k), k);
  const unique = [...distinct.values()];
  const loaded = await sends.acceptContexts(db, unique);
  const byId = new Map(unique.map((k, i) => [id(k), loaded[i]!]));
  return keys.map((k) => byId.get(id(k))!);
}

/** The batch's sends, log rows and commands in one statement. */
function insert(db: Db, batch: readonly GroupedSend[]): Promise<void> {
  return sends.insertAcceptedBatch(
    db,
    batch.map(({ send, recipients }) => ({ send, recipients, outbox: [] })),
    sendCommands(batch.map((b) => b.copies)),
  );
}

async function writeBatch(db: Db, batch: GroupedSend[]): Promise<Array<undefined | BatchItemError>> {
  batchSize.observe(batch.length);
  try {
    await insert(db, batch);
    return batch.map(() => undefined);
  } catch (err) {
    if (batch.length === 1 || !isDataError(err)) throw err;
    // Nothing of the batch was written (one statement): each send alone, so one bad send fails only itself.
    return Promise.all(
      batch.map((rows) =>
        insert(db, [rows]).then(
          () => undefined,
          (own: unknown) => new BatchItemError(own),
        ),
      ),
    );
  }
}
