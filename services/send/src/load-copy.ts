/**
 * Reads what one send command needs in a single round trip (libs/store loadCopyRows: the send,
 * its stored request only when not cached, the copy's recipients, the events already recorded,
 * the mailer fingerprint and the suppressed recipients), batched across concurrent commands,
 * with the stored requests cached.
 */
import type { RecipientType, StoredSendRequest } from '@mailyard/contracts';
import { Batcher, type Queryable } from '@mailyard/platform';
import { type CopyKey, type CopyRow, type SendFields, loadCopyRows } from '@mailyard/store';

export interface CopyRecipientRow {
  logId: string;
  email: string;
  type: RecipientType;
  status: string;
  /** An API provider accepted it and reports the outcome by callback (SparkPost): not sent again. */
  accepted: boolean;
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

export type { CopyKey };

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

type Row = CopyRow;

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
  const rows = await loadCopyRows(db, keys, withRequest);
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
      accepted: x.accepted === true,
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
