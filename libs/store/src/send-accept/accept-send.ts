import {
  ErrorText,
  SEND_LIMITS,
  type SendRequest,
  type StoredSendRequest,
  domainOf,
  messageSizeBytes,
  pausedMessage,
  planCopies,
  releaseAtMs,
  ulid,
} from '@mailyard/contracts';
import {
  type Db,
  HttpError,
  type Queryable,
  type Sealer,
  badRequest,
  counter,
  notFound,
  unprocessable,
} from '@mailyard/platform';
import type { QueuedRecipient } from '../email-logs';
import { scheduledSends } from '../scheduled-sends';
import { type SendAcceptContext, sends } from '../sends';
import type { SendGroupCommit } from './group-commit';
import { assertMailerCanSend } from './mailer-check';
import { IDEMPOTENCY_TTL_SECONDS, requestHash } from './request-hash';
import { sendCommands, sendCopies } from './send-commands';

export interface SendDeps {
  db: Db;
  sealer: Sealer;
  /** Called after a send committed its outbox rows (wakes the relay instead of waiting a poll). */
  onOutboxWrite?: () => void;
  /** Shares reads and the insert of concurrent sends without an Idempotency-Key (group-commit.ts). */
  group?: SendGroupCommit;
}

export interface Accepted {
  refId: string;
  /** True when an earlier send with the same Idempotency-Key is answered again. */
  replayed: boolean;
  /** True when the send waits for its `send_at` (status SCHEDULED). */
  scheduled: boolean;
}

const accepted = counter('mailyard_sends_accepted_total', 'Sends accepted by POST /v1/email/send');
const acceptedRecipients = counter(
  'mailyard_send_recipients_accepted_total',
  'Log rows (recipients of copies) queued',
);

/** Subject and content from the request, else from its template (404 when unknown). */
function resolveBody(
  request: SendRequest,
  template: SendAcceptContext['template'],
): Pick<StoredSendRequest, 'subject' | 'content'> {
  let subject = request.subject;
  let content = request.content;
  if (template !== undefined) {
    if (!template) throw notFound(ErrorText.templateNotFound);
    subject ??= template.subject;
    content ??= template.content;
  }
  if (subject === undefined) throw badRequest(ErrorText.subjectRequired);
  if (content === undefined || content.length === 0) throw badRequest(ErrorText.contentRequired);
  return { subject, content };
}

/** The send answered for a key already taken: same request = replay, another = 422. */
async function replay(
  db: Db,
  tenantId: string,
  key: string,
  hash: string,
  sendAt: string | undefined,
): Promise<Accepted | null> {
  const existing = await sends.findByIdempotencyKey(db, tenantId, key, IDEMPOTENCY_TTL_SECONDS);
  if (!existing) return null;
  if (existing.requestHash !== hash) throw unprocessable(ErrorText.idempotencyKeyReused);
  // The same request: scheduled when its send_at is still ahead.
  return { refId: existing.refId, replayed: true, scheduled: releaseAtMs(sendAt, Date.now()) !== null };
}

/**
 * Accepts a validated send: resolves the template, checks size and mailer, then writes the
 * `sends` row, one QUEUED `email_logs` row per recipient of each copy and its `send.email`
 * commands (send-commands.ts) in one statement: alone, one outbox row per chunk of
 * COPIES_PER_COMMAND copies; with `deps.group`, in the statement of concurrent sends, whose
 * commands may share outbox rows (group-commit.ts). With an Idempotency-Key, a live send holding the key is answered instead
 * (its ref_id), and concurrent duplicates never both insert. A send whose `send_at` is ahead
 * is written alone (not in a group commit) in one transaction with no outbox rows, then held:
 * its log rows SCHEDULED and its commands kept in `scheduled_sends` until the send service's
 * release (libs/store scheduled-sends.ts).
 */
export async function acceptSend(
  deps: SendDeps,
  tenantId: string,
  request: SendRequest,
  key: string | null,
): Promise<Accepted> {
  const { db } = deps;
  const hash = key === null ? null : requestHash(request);
  if (key !== null && hash !== null) {
    const earlier = await replay(db, tenantId, key, hash, request.send_at);
    if (earlier) return earlier;
  }

  const releaseAt = releaseAtMs(request.send_at, Date.now());
  // Mailer and template in one round trip; checked in the documented order (template first).
  const group = key === null && releaseAt === null ? deps.group : undefined;
  const fromDomain = domainOf(request.from.email).toLowerCase();
  const context = group
    ? await group.context({
        tenantId,
        mailerId: request.mailer_id,
        templateId: request.template_id,
        fromDomain,
      })
    : await sends.acceptContext(db, tenantId, request.mailer_id, request.template_id, fromDomain);
  const body = resolveBody(request, context.template);
  if (messageSizeBytes(body.content, request.attachments) > SEND_LIMITS.maxMessageBytes) {
    throw new HttpError(413, ErrorText.messageTooLarge);
  }
  assertMailerCanSend(context.mailer, request.from.email);
  // A paused domain or mailer (docs/deliverability.md "Reputation and automatic pause"): read in
  // the context's round trip, no cache, so a pause holds from the next send on.
  if (context.pause) throw unprocessable(pausedMessage(context.pause));

  const refId = ulid();
  const stored: StoredSendRequest = { ...request, ...body };
  const copies = planCopies(request, refId);
  const recipients: QueuedRecipient[] = copies.flatMap((c) =>
    c.recipients.map((r) => ({
      copyId: c.copy_id,
      recipient: r.email,
      recipientDomain: domainOf(r.email),
      recipientType: r.type,
    })),
  );
  const commanded = sendCopies(
    tenantId,
    refId,
    copies.map((c) => c.copy_id),
  );
  const send = {
    refId,
    tenantId,
    mailerId: request.mailer_id,
    campaignId: request.campaign_id ?? null,
    customArgs: request.custom_args ?? null,
    request: stored,
  };
  // The send, its log rows and its commands are one statement; with a key, an expired holder
  // of the key is released first in the same transaction. A scheduled send's commands are held
  // instead, in the same transaction.
  const newSend = () => ({ ...send, idempotencyKey: key, requestHash: hash });
  const write = (q: Queryable) => sends.insertAccepted(q, newSend(), recipients, sendCommands([commanded]));
  const writeHeld = async (tx: Queryable, at: number) => {
    if (!(await sends.insertAccepted(tx, newSend(), recipients, []))) return false;
    await scheduledSends.hold(tx, tenantId, refId, new Date(at), sendCommands([commanded]));
    return true;
  };
  let inserted: boolean;
  if (group) inserted = await group.write({ send, recipients, copies: commanded }).then(() => true);
  else if (key === null && releaseAt === null) inserted = await write(db);
  else
    inserted = await db.transaction(async (tx) => {
      if (key !== null) await sends.releaseExpiredIdempotencyKey(tx, tenantId, key, IDEMPOTENCY_TTL_SECONDS);
      return releaseAt === null ? write(tx) : writeHeld(tx, releaseAt);
    });

  if (!inserted) {
    // Another request took the key between our look-up and insert (it committed first).
    const earlier =
      key !== null && hash !== null ? await replay(db, tenantId, key, hash, request.send_at) : null;
    if (!earlier) throw new HttpError(409, ErrorText.idempotencyKeyInProgress);
    return earlier;
  }
  if (releaseAt === null) deps.onOutboxWrite?.();
  accepted.inc();
  acceptedRecipients.inc(recipients.length);
  return { refId, replayed: false, scheduled: releaseAt !== null };
}
