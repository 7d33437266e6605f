/**
 * What became of every request of a load phase, so a missing email is diagnosed, not guessed.
 *
 * autocannon's own counts cannot tell: a request it times out (10 s) or whose connection the
 * server closed is counted towards `amount` and replaced by the next one, and the server may or
 * may not have committed it. So each request carries its bench index (the body's custom_args
 * key, `i` for single sends, `batch` for batch sends); the ledger records per index the HTTP
 * status (or none: timed out / connection failed) and the ref_id of a 2xx, and `account` reads
 * the database afterwards:
 * - committed: the sends rows of the phase's indices (what the pipeline must deliver; a request
 *   answered with no status can be among them: the gateway committed it after the client left);
 * - accepted_not_committed: 2xx ref_ids without a sends row (would break "a 2xx means stored");
 * - accepted_not_delivered: committed sends with a log row not MAIL_DELIVERED, with those rows'
 *   status, attempts, last event and failure reason, and their outbox rows still unpublished.
 */
import type { Request } from 'autocannon';
import type pg from 'pg';

export class RequestLedger {
  /** bench index -> HTTP status; null while unanswered (and for good when autocannon gave up on it). */
  readonly status = new Map<number, number | null>();
  /** bench index -> ref_id of its 2xx answer. */
  readonly refIds = new Map<number, string>();

  constructor(
    /** The custom_args key holding the index in the body (see pipeline.ts singleBody/batchBody). */
    readonly key: 'i' | 'batch',
    private readonly next: () => number,
    private readonly bodyOf: (i: number) => string,
  ) {}

  /** The autocannon request: each build takes the next index (one build per request written). */
  request(): Request {
    return {
      setupRequest: (req, context) => {
        const i = this.next();
        (context as { i?: number }).i = i;
        this.status.set(i, null);
        return { ...req, body: this.bodyOf(i) };
      },
      onResponse: (status, body, context) => {
        const i = (context as { i?: number }).i;
        if (i === undefined) return;
        this.status.set(i, status);
        if (status >= 200 && status < 300) {
          const refId = (JSON.parse(body) as { ref_id?: unknown }).ref_id;
          if (typeof refId === 'string') this.refIds.set(i, refId);
        }
      },
    };
  }
}

interface LogState {
  status: string;
  attempts: number;
  last_event: string | null;
  failure_reason: string | null;
}

export interface PhaseAccount {
  requests_sent: number;
  answered_2xx: number;
  /** status -> count of other answers. */
  non_2xx: Record<string, number>;
  /** Sent and never answered (autocannon timed them out, or their connection failed). */
  unanswered: number;
  /** Sends rows of this phase's indices: what the pipeline has to deliver. */
  committed_sends: number;
  /** Their log rows (emails). */
  committed_emails: number;
  /** Indices committed although the client saw no 2xx (timed out after the gateway read them). */
  committed_without_2xx: number[];
  /** Must stay empty: a 2xx whose send is not stored. */
  accepted_not_committed: string[];
  /** Must stay empty: committed sends not (yet) delivered, with their log statuses. */
  accepted_not_delivered: Array<{
    ref_id: string;
    index: number;
    answered: number | null;
    /** Its log rows not delivered: QUEUED (never attempted), SMTP_ERROR (retrying), ... */
    logs: LogState[];
    /** Its outbox rows not yet published (the relay's side: > 0 means not on the bus yet). */
    outbox_pending: number;
  }>;
}

/** Committed sends of the ledger's indices: ref_id, index and emails (log rows). */
async function committedSends(c: pg.Client, tenantId: string, ledger: RequestLedger) {
  const { rows } = await c.query<{ ref_id: string; i: number; emails: number }>(
    `SELECT s.ref_id, (s.custom_args->>$2)::int AS i,
            (SELECT count(*)::int FROM email_logs l WHERE l.tenant_id = s.tenant_id AND l.ref_id = s.ref_id) AS emails
       FROM sends s
      WHERE s.tenant_id = $1 AND s.custom_args ? $2 AND (s.custom_args->>$2)::int = ANY($3::int[])`,
    [tenantId, ledger.key, [...ledger.status.keys()]],
  );
  return rows;
}

/** How many emails the phase's committed sends hold (the delivery wait's target). */
export async function committedEmails(
  c: pg.Client,
  tenantId: string,
  ledger: RequestLedger,
): Promise<number> {
  return (await committedSends(c, tenantId, ledger)).reduce((n, r) => n + r.emails, 0);
}

/** The phase's account (see the file comment); read after its delivery wait ended. */
export async function account(c: pg.Client, tenantId: string, ledger: RequestLedger): Promise<PhaseAccount> {
  const statuses = [...ledger.status.values()];
  const non2xx: Record<string, number> = {};
  for (const s of statuses) if (s !== null && (s < 200 || s >= 300)) non2xx[s] = (non2xx[s] ?? 0) + 1;
  const committed = await committedSends(c, tenantId, ledger);
  const committedRefs = new Set(committed.map((r) => r.ref_id));
  const { rows: open } = await c.query<{ ref_id: string; logs: LogState[]; outbox_pending: number }>(
    `SELECT l.ref_id,
            json_agg(json_build_object('status', l.status, 'attempts', l.attempts, 'last_event', l.last_event,
                                       'failure_reason', l.failure_reason) ORDER BY l.id) AS logs,
            (SELECT count(*)::int FROM outbox o
              WHERE o.message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', l.ref_id))
            ) AS outbox_pending
       FROM email_logs l
      WHERE l.tenant_id = $1 AND l.ref_id = ANY($2::text[]) AND l.status <> 'MAIL_DELIVERED' GROUP BY l.ref_id`,
    [tenantId, [...committedRefs]],
  );
  const indexOf = new Map(committed.map((r) => [r.ref_id, r.i]));
  return {
    requests_sent: statuses.length,
    answered_2xx: ledger.refIds.size,
    non_2xx: non2xx,
    unanswered: statuses.filter((s) => s === null).length,
    committed_sends: committed.length,
    committed_emails: committed.reduce((n, r) => n + r.emails, 0),
    committed_without_2xx: committed.filter((r) => !ledger.refIds.has(r.i)).map((r) => r.i),
    accepted_not_committed: [...ledger.refIds.values()].filter((ref) => !committedRefs.has(ref)),
    accepted_not_delivered: open.map((r) => ({
      ref_id: r.ref_id,
      index: indexOf.get(r.ref_id)!,
      answered: ledger.status.get(indexOf.get(r.ref_id)!) ?? null,
      logs: r.logs,
      outbox_pending: r.outbox_pending,
    })),
  };
}

/** Whether the account shows a broken promise (printed as such, and the run exits non-zero). */
export function lossIn(a: PhaseAccount): boolean {
  return a.accepted_not_committed.length > 0 || a.accepted_not_delivered.length > 0;
}
