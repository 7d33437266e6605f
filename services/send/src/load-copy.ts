/**
 * Reads what one send command needs in a single round trip: the send (its stored request only
 * when not cached), the copy's recipients (email_logs rows) and the events already recorded for
 * the copy (email_events), from which the consumer derives which recipients are finished and
 * whether this attempt was already recorded.
 */
import type { RecipientType, StoredSendRequest } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import type { SendFields } from '@mailyard/store';
import { Batcher } from './batcher';

export interface CopyRecipientRow {
  logId: string;
  email: string;
  type: RecipientType;
  status: string;
}

export interface RecordedEvent {
  event: string;
  attempt: number;
  emails: string[];
  retryScheduled: boolean | null;
  failedReason: string;
  providerError: string;
}

export type SendRow = SendFields;

export interface LoadedCopy {
  send: SendRow;
  /** Size of the stored request (JSON text), for the in-flight byte budget. */
  requestBytes: number;
  recipients: CopyRecipientRow[];
  events: RecordedEvent[];
  /**
   * Fingerprint of every mailer/domain column the send service depends on (state, deletion,
   * verification, config, secrets, key, selector); null when the mailer does not exist. Lets a
   * cached SendingMailer be reused exactly as long as nothing changed.
   */
  mailerVersion: string | null;
  /** The copy's recipients the tenant suppressed, lowercased (= addressKey: addresses are ASCII). */
  suppressed: Set<string>;
}

type Row = {
  k: number;
  ref_id: string;
  tenant_id: string;
  mailer_id: string;
  campaign_id: string | null;
  custom_args: Record<string, unknown> | null;
  request: string | null;
  recipients: Array<{ id: string; recipient: string; type: RecipientType; status: string }>;
  mailer_version: string | null;
  suppressed: string[];
  events: Array<{
    event: string;
    attempt: number;
    email: string[] | null;
    retry_scheduled: boolean | null;
    failed_reason: string | null;
    provider_error: string | null;
  }>;
};

const SQL = `
WITH want AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::boolean[]) AS w(k, ref_id, tenant_id, copy_id, with_request)
)
SELECT w.k, s.ref_id, s.tenant_id, s.mailer_id, s.campaign_id, s.custom_args,
       CASE WHEN w.with_request THEN s.request::text END AS request,
       COALESCE((SELECT json_agg(json_build_object('id', l.id, 'recipient', l.recipient, 'type', l.recipient_type,
                                                   'status', l.status) ORDER BY l.id)
                   FROM email_logs l WHERE l.copy_id = w.copy_id AND l.tenant_id = w.tenant_id), '[]'::json) AS recipients,
       COALESCE((SELECT json_agg(json_build_object('event', e.event, 'attempt', e.attempt,
                                                   'email', e.payload->'details'->'email',
                                                   'retry_scheduled', e.payload->'details'->'retry_scheduled',
                                                   'failed_reason', e.payload->'details'->>'failed_reason',
                                                   'provider_error', e.payload->'details'->>'provider_error') ORDER BY e.id)
                   FROM email_events e WHERE e.copy_id = w.copy_id), '[]'::json) AS events,
       (SELECT md5(concat_ws('|', m.state, m.deleted_at, m.updated_at, m.config::text, md5(m.secret),
                             d.name, d.verified, d.deleted_at, d.updated_at, d.selector, md5(d.dkim_private_key)))
          FROM mailers m LEFT JOIN domains d ON d.id = m.id
         WHERE m.id = s.mailer_id AND m.tenant_id = s.tenant_id) AS mailer_version,
       -- Same rule as libs/store isSuppressed (addressKey = lowercase), folded into this round trip.
       ARRAY(SELECT x.email FROM suppressions x
              WHERE x.tenant_id = s.tenant_id
                AND x.email IN (SELECT lower(l.recipient) FROM email_logs l
                                 WHERE l.copy_id = w.copy_id AND l.tenant_id = w.tenant_id)) AS suppressed
  FROM want w JOIN sends s ON s.ref_id = w.ref_id AND s.tenant_id = w.tenant_id`;

/**
 * Stored requests are immutable, and every copy of a send needs the same one (with substitutions
 * there is a copy per `to` recipient): a send's request is fetched and parsed once, not per copy.
 * - An LRU of recent requests, bounded by their JSON size (`maxBytes`; one request may use all
 *   of it, so a send with 30 MB of attachments is cached too).
 * - Requests still held by copies in flight stay shared even when the LRU dropped them (weak
 *   references: they are found as long as any copy holds them, and freed with the last one).
 * Sizes are the JSON text lengths; LoadedCopy.requestBytes carries them to the byte budget.
 */
export class RequestCache {
  private readonly entries = new Map<string, { request: StoredSendRequest; size: number }>();
  private readonly live = new Map<string, { ref: WeakRef<StoredSendRequest>; size: number }>();
  private readonly finalizer = new FinalizationRegistry<string>((refId) => {
    if (this.live.get(refId)?.ref.deref() === undefined) this.live.delete(refId);
  });
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get(refId: string): { request: StoredSendRequest; size: number } | undefined {
    const e = this.entries.get(refId);
    if (e) {
      this.entries.delete(refId);
      this.entries.set(refId, e);
      return e;
    }
    const held = this.live.get(refId);
    const request = held?.ref.deref();
    return request && held ? { request, size: held.size } : undefined;
  }

  set(refId: string, request: StoredSendRequest, size: number): void {
    if (this.live.get(refId)?.ref.deref() !== request) {
      this.live.set(refId, { ref: new WeakRef(request), size });
      this.finalizer.register(request, refId);
    }
    if (size > this.maxBytes) return;
    const old = this.entries.get(refId);
    if (old) {
      this.bytes -= old.size;
      this.entries.delete(refId);
    }
    this.entries.set(refId, { request, size });
    this.bytes += size;
    while (this.bytes > this.maxBytes) {
      const [key, e] = this.entries.entries().next().value!;
      this.entries.delete(key);
      this.bytes -= e.size;
    }
  }
}

export interface CopyKey {
  ref_id: string;
  tenant_id: string;
  copy_id: string;
}

/**
 * Loads any number of copies in one query; null for a send (or this tenant's send) that does
 * not exist. A request not in the cache is fetched once per batch (for the first of its copies)
 * and shared by the others.
 */
export async function loadCopies(
  db: Queryable,
  keys: CopyKey[],
  cache: RequestCache,
): Promise<Array<LoadedCopy | null>> {
  const cached = keys.map((k) => cache.get(k.ref_id));
  const sendKey = (k: { ref_id: string; tenant_id: string }) => `${k.tenant_id}\u0000${k.ref_id}`;
  const fetching = new Set<string>();
  const withRequest = keys.map((k, i) => {
    if (cached[i] !== undefined || fetching.has(sendKey(k))) return false;
    fetching.add(sendKey(k));
    return true;
  });
  const { rows } = await db.query<Row>(SQL, [
    keys.map((_, i) => i),
    keys.map((k) => k.ref_id),
    keys.map((k) => k.tenant_id),
    keys.map((k) => k.copy_id),
    withRequest,
  ]);
  const fetched = new Map<string, { request: StoredSendRequest; size: number }>();
  for (const r of rows) {
    if (r.request === null) continue;
    const request = JSON.parse(r.request) as StoredSendRequest;
    fetched.set(sendKey(r), { request, size: r.request.length });
    cache.set(r.ref_id, request, r.request.length);
  }
  const out: Array<LoadedCopy | null> = keys.map(() => null);
  for (const r of rows) {
    const found = cached[r.k] ?? fetched.get(sendKey(r));
    if (found) out[r.k] = toLoaded(r, found.request, found.size);
  }
  return out;
}

/** One copy (see loadCopies). */
export async function loadCopy(db: Queryable, key: CopyKey, cache: RequestCache): Promise<LoadedCopy | null> {
  return (await loadCopies(db, [key], cache))[0] ?? null;
}

function toLoaded(r: Row, request: StoredSendRequest, requestBytes: number): LoadedCopy {
  return {
    requestBytes,
    send: {
      refId: r.ref_id,
      tenantId: r.tenant_id,
      mailerId: r.mailer_id,
      campaignId: r.campaign_id,
      customArgs: r.custom_args,
      request,
    },
    recipients: r.recipients.map((x) => ({
      logId: x.id,
      email: x.recipient,
      type: x.type,
      status: x.status,
    })),
    events: r.events.map((e) => ({
      event: e.event,
      attempt: e.attempt,
      emails: Array.isArray(e.email) ? e.email : [],
      retryScheduled: typeof e.retry_scheduled === 'boolean' ? e.retry_scheduled : null,
      failedReason: e.failed_reason ?? '',
      providerError: e.provider_error ?? '',
    })),
    mailerVersion: r.mailer_version,
    suppressed: new Set(r.suppressed),
  };
}

/** Loads the copies of concurrent commands with one query per batch. */
export class CopyLoader {
  private readonly batcher: Batcher<CopyKey, LoadedCopy | null>;

  constructor(db: Queryable, cache: RequestCache, maxBatch = 200) {
    this.batcher = new Batcher((keys) => loadCopies(db, keys, cache), maxBatch);
  }

  load(key: CopyKey): Promise<LoadedCopy | null> {
    return this.batcher.submit(key);
  }
}
