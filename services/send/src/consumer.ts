/**
 * Handles `send.email` messages: each copy a message names (libs/contracts bus/send-command.ts)
 * is one attempt at one copy of an accepted send, handled as below.
 *
 * Order: load the copy (recipients + events so far) -> skip what is already done or cancelled -> mailer
 * policy -> suppressions -> render -> phishing check -> MIME + DKIM -> deliver (envelopes.ts: one
 * per recipient with its VERP return path for domain mailers) -> record every
 * outcome of the attempt in one transaction (events, log rows, outbox; the suppression of a
 * recipient a final 5xx proved invalid, emit-event.ts) -> schedule the retry
 * (bus.publishDelayed, before the ack) -> deactivate the mailer when its credentials were refused.
 *
 * Idempotency: each recipient ends with exactly one terminal event (MAIL_DELIVERED, final
 * SMTP_ERROR, PHISHING, MAIL_POLICY_REJECTION, MAIL_GENERATION_REJECTION). A redelivered command
 * whose attempt is already recorded sends nothing; it only re-publishes a retry that a crash may
 * have lost. Commands for the same copy are processed one at a time per process.
 */
import {
  BusMessages,
  type CopyRecipient,
  type EmailEventType,
  ErrorText,
  Queue,
  SUPPRESSING_BOUNCE_CATEGORY,
  type SendEmailCommand,
  type SendingMailer,
  addressKey,
  commandOfOneCopy,
  decodeSendEmailMessage,
  isPerRecipient,
  isTerminalSendEvent,
  sendRefusal,
  substitutionsFor,
} from '@mailyard/contracts';
import {
  type Bus,
  type ByteBudget,
  type Db,
  type Delivery,
  type Logger,
  PermanentError,
  SealError,
  type Sealer,
  childTraceparent,
  counter,
  currentTrace,
  envelope,
  histogram,
  isValidTraceparent,
  runWithTrace,
} from '@mailyard/platform';
import { AUTH_REASON_PREFIX, type DeliveryFailure } from '@mailyard/providers';
import {
  deactivateMailer,
  loadSendingMailer,
  recordProviderAcceptance,
  verifiedDomainKey,
} from '@mailyard/store';
import { copyCostBytes } from './copy-cost';
import { plannedCopy } from './copy-plan';
import { type DkimKey, dkimSign } from './dkim';
import type { EventContext, EventRecipient, EventWriter, PlannedEvent } from './emit-event';
import { envelopesFor } from './envelopes';
import type { CopyLoader, CopyRecipientRow, LoadedCopy, RecordedEvent } from './load-copy';
import type { MailerCache } from './mailer-cache';
import { deactivationReason, recordedDeactivation } from './mailer-deactivation';
import { buildMessage } from './mime';
import { type PhishingInput, checkPhishingAsync } from './phishing';
import type { PhishingVerdicts } from './phishing-verdicts';
import { renderCopy } from './render';
import { withRetryAfter } from './retry-delay';
import { type SendSettings, retryDelayMs } from './settings';
import { keysOf, trackCopy } from './track-copy';
import type { Transports } from './transports';
import { NO_GRANT_REASON } from './transports/classify-provider-error';
import { headerRecipientsFor } from './transports/header-recipients';
import type { DeliverHints } from './transports/types';

export interface ConsumerDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  sealer: Sealer;
  settings: SendSettings;
  transports: Transports;
  copies: CopyLoader;
  mailers: MailerCache;
  events: EventWriter;
  /** Bounds the bytes of copies being built and delivered at once (SEND_INFLIGHT_BYTES). */
  budget: ByteBudget;
  /**
   * Bounds the number of copies being built and delivered at once (SEND_CONCURRENCY, one unit per
   * copy): a message may name up to 100 copies, so the prefetch alone no
   * longer bounds the copies in flight. Without it only the byte budget does.
   */
  copySlots?: ByteBudget;
  /** Phishing verdicts of recent contents (the settings' rules); without it every copy is scanned. */
  verdicts?: PhishingVerdicts;
  /** Called after events were committed (wakes the outbox relay). */
  afterCommit?: () => void;
}

export const SUPPRESSED_REASON = 'recipient unsubscribed';

const eventsTotal = counter('mailyard_send_events_total', 'Email events recorded by the send service', [
  'event',
]);
const skippedTotal = counter(
  'mailyard_send_commands_skipped_total',
  'Send commands that found their attempt already recorded or nothing left to send',
);
const deliverySeconds = histogram(
  'mailyard_send_delivery_seconds',
  'Time of one SMTP delivery (all recipients of a copy)',
  [],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
);

/**
 * The bus handler: decodes the message (copies of one or several sends, send-command.ts) and runs
 * each copy it names as its own SendEmailCommand, attempts of one copy one after another. Each
 * send's copies run in that send's trace (the item's traceparent, else the envelope's), so their
 * events, logs and retries continue the trace of the request that accepted the send, and each copy is
 * loaded by its own (tenant_id, ref_id, copy_id). All copies start at once, so their loads share
 * one statement (CopyLoader) and their events share group commits (EventWriter); the work per
 * copy is bounded by the byte budget and the copy slots, not by the number of messages. The
 * message settles only after every copy's outcome is committed: if any copy failed, the whole
 * message is redelivered and the copies already recorded are skipped by processCommand's
 * idempotency (their attempt is recorded).
 */
export function createSendHandler(deps: ConsumerDeps): (delivery: Delivery<unknown>) => Promise<void> {
  const inFlight = new Map<string, Promise<void>>();
  const runCopy = (cmd: SendEmailCommand): Promise<void> => {
    const before = inFlight.get(cmd.copy_id);
    // Almost always nothing runs for this copy: start at once, without waiting a turn.
    const run = before ? before.then(() => processCommand(deps, cmd)) : processCommand(deps, cmd);
    const settled = run.then(
      () => {},
      () => {},
    );
    inFlight.set(cmd.copy_id, settled);
    settled.then(() => {
      if (inFlight.get(cmd.copy_id) === settled) inFlight.delete(cmd.copy_id);
    });
    return run;
  };
  return (delivery) => {
    const { version, payload } = delivery.envelope;
    const decoded = decodeSendEmailMessage(version, payload);
    if (!decoded.ok) return Promise.reject(new PermanentError(`invalid send command: ${decoded.error}`));
    const runs: Array<Promise<void>> = [];
    for (const send of decoded.sends) {
      if (send.traceparent === undefined) for (const cmd of send.copies) runs.push(runCopy(cmd));
      else
        runWithTrace(
          {
            traceparent: isValidTraceparent(send.traceparent) ? send.traceparent : childTraceparent(),
            tenantId: send.tenantId,
          },
          () => {
            for (const cmd of send.copies) runs.push(runCopy(cmd));
          },
        );
    }
    if (runs.length === 1) return runs[0]!;
    return Promise.allSettled(runs).then(firstFailure);
  };
}

/**
 * Resolves when every copy succeeded; else rejects with a failure the bus retries when there is
 * one (a copy that can be retried is not parked because another copy's failure was permanent).
 */
function firstFailure(outcomes: PromiseSettledResult<void>[]): void {
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed.length === 0) return;
  throw (failed.find((f) => !(f.reason instanceof PermanentError)) ?? failed[0]!).reason;
}

const lower = (s: string) => s.toLowerCase();

export async function processCommand(deps: ConsumerDeps, cmd: SendEmailCommand): Promise<void> {
  const { db, logger } = deps;
  const copy = await deps.copies.load(cmd);
  if (!copy) {
    logger.warn('send command for a send that does not exist; dropped', {
      ref_id: cmd.ref_id,
      copy_id: cmd.copy_id,
    });
    return;
  }
  const ctx: EventContext = {
    tenantId: cmd.tenant_id,
    refId: cmd.ref_id,
    mailerId: copy.send.mailerId,
    customArgs: copy.send.customArgs,
    attempt: cmd.attempt,
    traceparent: currentTrace()?.traceparent,
  };
  const recorded = copy.events.filter((e) => e.attempt === cmd.attempt);
  if (recorded.length > 0) {
    skippedTotal.inc();
    await finishRecordedAttempt(deps, cmd, copy, recorded);
    return;
  }
  const finished = new Set(
    copy.events
      .filter((e) => isTerminalSendEvent(e.event, e.retryScheduled ?? undefined))
      .flatMap((e) => e.emails.map(lower)),
  );
  // A recipient an API provider accepted (SparkPost) is finished for sending: its outcome comes by
  // callback. A CANCELLED recipient (a scheduled send cancelled before its release) is never
  // attempted; its command cannot normally exist (release and cancel exclude each other), so this
  // is the last guard, not the rule (libs/store scheduled-sends.ts).
  const pending = copy.recipients.filter(
    (r) => !r.accepted && r.status !== 'CANCELLED' && !finished.has(lower(r.email)),
  );
  if (pending.length === 0) {
    skippedTotal.inc();
    return;
  }

  const attempt = new Attempt(deps.settings, cmd);
  let mailer: SendingMailer | null;
  try {
    mailer = await deps.mailers.get(db, deps.sealer, cmd.tenant_id, copy.send.mailerId, copy.mailerVersion);
  } catch (err) {
    // A mailer row that cannot be read (sealed with another SECRET_KEY, corrupt) will not heal
    // by retrying; database errors are the bus's to retry.
    if (!(err instanceof SealError)) throw err;
    attempt.fail(pending, `Mailer configuration could not be loaded: ${err.message}`);
    await commit(deps, ctx, attempt);
    return;
  }
  // A mailer missing, deleted, disabled, deactivated or with an unverified domain when the
  // attempt runs is a mailer-config load failure (docs/architecture.md, reliability 2):
  // a final SMTP_ERROR with attempt metadata for every intended recipient.
  const refusal = sendRefusal(mailer);
  if (refusal || !mailer) {
    attempt.fail(pending, refusal?.message ?? ErrorText.mailerNotFound);
    await commit(deps, ctx, attempt);
    return;
  }

  const suppressed = copy.suppressed;
  const toSend = pending.filter((r) => !suppressed.has(addressKey(r.email)));
  const unsubscribed = pending.filter((r) => suppressed.has(addressKey(r.email)));
  if (unsubscribed.length > 0) attempt.other('MAIL_GENERATION_REJECTION', unsubscribed, SUPPRESSED_REASON);
  if (toSend.length > 0) {
    // Rendering, building, signing and delivering hold a copy slot and the copy's bytes: wait
    // for both first (the slot first: a copy waiting for a slot holds no bytes).
    const releaseSlot = deps.copySlots ? await deps.copySlots.acquire(1) : undefined;
    try {
      const release = await deps.budget.acquire(copyCostBytes(copy.requestBytes));
      try {
        await sendCopy(deps, cmd, copy, mailer, toSend, attempt);
      } finally {
        release();
      }
    } finally {
      releaseSlot?.();
    }
  }
  // Acceptances first: once SparkPost has the copy, nothing may send it again.
  for (const a of attempt.acceptances())
    await recordProviderAcceptance(db, cmd.tenant_id, a.logIds, a.transmissionId, cmd.attempt);
  await commit(deps, ctx, attempt);

  const deactivation = attempt.authFailure && deactivationReason(mailer, attempt.authFailure);
  if (deactivation) {
    const change = await deactivateMailer(
      db,
      cmd.tenant_id,
      mailer.id,
      deactivation,
      attempt.authFailure!.providerError,
    );
    if (change === 'changed') deps.afterCommit?.();
    logger.warn('mailer deactivated: its credentials were refused', {
      mailer_id: mailer.id,
      reason: deactivation,
      change,
    });
  }
}

/** Records the attempt's events, then schedules the retry it needs (if any). */
async function commit(deps: ConsumerDeps, ctx: EventContext, attempt: Attempt): Promise<void> {
  const events = attempt.events();
  const recorded = await deps.events.write(ctx, events);
  for (const e of recorded) eventsTotal.inc({ event: e.event });
  if (recorded.length > 0) deps.afterCommit?.();
  for (const e of recorded) {
    const level = e.event === 'MAIL_DELIVERED' ? 'debug' : 'info';
    // winston formats an entry (timestamp, JSON) before its transports drop it by level: ask first.
    if (!deps.logger.isLevelEnabled(level)) continue;
    deps.logger.log(level, 'email event', {
      event: e.event,
      ref_id: ctx.refId,
      attempt: ctx.attempt,
      recipients: e.details.email.length,
      failed_reason: e.details.failed_reason || undefined,
      retry_scheduled: e.details.retry_scheduled,
    });
  }
  // Only the delivery that recorded the retry-scheduled SMTP_ERROR schedules the retry (another
  // process that recorded this attempt first has scheduled it).
  if (recorded.some((e) => e.event === 'SMTP_ERROR' && e.details.retry_scheduled === true)) {
    await publishRetry(deps, attempt.cmd, attempt.retryAfterMs);
  }
}

/**
 * The next attempt at the copy, a message of one copy continuing the copy's trace in a span of its
 * own. `retryAfterMs`: the provider's Retry-After, when it named one (retry-delay.ts).
 */
async function publishRetry(deps: ConsumerDeps, cmd: SendEmailCommand, retryAfterMs?: number): Promise<void> {
  const traceparent = childTraceparent(currentTrace()?.traceparent);
  const next = commandOfOneCopy({ ...cmd, attempt: cmd.attempt + 1 }, traceparent);
  const delay = withRetryAfter(retryDelayMs(deps.settings, cmd.attempt), retryAfterMs);
  const { name, version } = BusMessages.sendEmail;
  await deps.bus.publishDelayed(
    Queue.send,
    envelope(name, next, { version, tenantId: cmd.tenant_id, parentTraceparent: traceparent }),
    delay,
  );
}

/**
 * The attempt was recorded by an earlier delivery of this command that did not get to ack it.
 * Nothing is sent again; the retry it scheduled is published again unless the next attempt is
 * already recorded (a duplicate next command is harmless: it finds its attempt recorded or runs
 * after the other one, see createSendHandler), and a refused login deactivates the mailer. The
 * provider's Retry-After is not recorded: a re-published retry follows the schedule.
 */
async function finishRecordedAttempt(
  deps: ConsumerDeps,
  cmd: SendEmailCommand,
  copy: LoadedCopy,
  recorded: RecordedEvent[],
) {
  const retried = recorded.some((e) => e.event === 'SMTP_ERROR' && e.retryScheduled === true);
  const nextRecorded = copy.events.some((e) => e.attempt === cmd.attempt + 1);
  if (retried && !nextRecorded) {
    await publishRetry(deps, cmd);
    deps.logger.info('recorded attempt redelivered: retry published again', {
      ref_id: cmd.ref_id,
      attempt: cmd.attempt,
    });
  }
  const auth = recorded.find(
    (e) =>
      e.event === 'SMTP_ERROR' && e.retryScheduled === false && e.failedReason.startsWith(AUTH_REASON_PREFIX),
  );
  if (auth) {
    const mailer = await loadSendingMailer(deps.db, deps.sealer, cmd.tenant_id, copy.send.mailerId).catch(
      () => null,
    );
    const reason = mailer && recordedDeactivation(mailer, auth.failedReason);
    if (mailer && reason)
      await deactivateMailer(deps.db, cmd.tenant_id, mailer.id, reason, auth.providerError);
  }
}

/** Renders, checks, builds and delivers the copy to `toSend`; adds the outcomes to `attempt`. */
async function sendCopy(
  deps: ConsumerDeps,
  cmd: SendEmailCommand,
  copy: LoadedCopy,
  mailer: SendingMailer,
  toSend: CopyRecipientRow[],
  attempt: Attempt,
): Promise<void> {
  const { request } = copy.send;
  if (!deps.transports.supports(mailer)) {
    // An OAuth mailer without a grant (every other sending mailer has a transport).
    attempt.fail(toSend, NO_GRANT_REASON);
    return;
  }
  const transport = deps.transports.for(mailer);
  const envelopeTo = [...new Map(toSend.map((r) => [lower(r.email), r.email])).values()];
  // Who the headers name (a tracked copy goes to one recipient but shows the message's To/Cc).
  // A provider that delivers to the headers (Gmail API, Graph) gets only this delivery's recipients.
  const planned = plannedCopy(request, cmd.ref_id, cmd.copy_id);
  const copyRecipients =
    planned?.recipients ?? copy.recipients.map((r) => ({ email: r.email, type: r.type }));
  const recipients: CopyRecipient[] = transport.recipientsFromHeaders
    ? headerRecipientsFor(copyRecipients, envelopeTo)
    : (planned?.display ?? copyRecipients);

  let rendered: ReturnType<typeof renderCopy>;
  try {
    const to = recipients.find((r) => r.type === 'to');
    rendered = renderCopy(request, isPerRecipient(request) && to ? substitutionsFor(request, to.email) : {});
  } catch (err) {
    attempt.fail(toSend, `Rendering failed: ${(err as Error).message}`);
    return;
  }

  // Sliced and budgeted (see phishing.ts): a hostile body never holds the process, and one that
  // exceeds the budget is refused (final), so no retry or restart checks it again.
  const check = (input: PhishingInput) =>
    checkPhishingAsync(input, {
      blocklist: deps.settings.phishingBlocklist,
      budgetMs: deps.settings.phishingBudgetMs,
      maxLinks: deps.settings.phishingMaxLinks,
    });
  // Copies with the same content (phishing-verdicts.ts) are scanned once.
  const verdict = deps.verdicts ? await deps.verdicts.verdict(rendered, check) : await check(rendered);
  if (verdict) {
    attempt.other('PHISHING', toSend, verdict.reason);
    return;
  }

  let raw: Buffer;
  let messageId: string;
  try {
    const tracked = trackCopy(
      request,
      rendered,
      { tenantId: cmd.tenant_id, refId: cmd.ref_id, recipients: copy.recipients },
      {
        baseUrl: deps.settings.trackingBaseUrl,
        bounceDomain: deps.settings.bounceDomain,
        sealer: deps.sealer,
      },
    );
    const built = await buildMessage({
      request,
      recipients,
      rendered: tracked.rendered,
      copyId: cmd.copy_id,
      serviceDomain: deps.settings.serviceDomain,
      serviceHeaders: tracked.headers,
    });
    messageId = built.messageId;
    const key = await signingKey(deps, mailer, request.from.email);
    raw = key ? await dkimSign(built.raw, key) : built.raw;
  } catch (err) {
    attempt.fail(toSend, `Message could not be built: ${(err as Error).message}`);
    return;
  }

  const threadId = customHeader(request.headers, 'thread-id');
  const hints: DeliverHints = {
    ...(threadId ? { threadId } : {}),
    copy: { refId: cmd.ref_id, copyId: cmd.copy_id },
    ...(copy.send.campaignId ? { campaignId: copy.send.campaignId } : {}),
  };
  const envelopes = envelopesFor(mailer, cmd.copy_id, request.from.email, envelopeTo, {
    key: keysOf(deps.sealer).returnPath,
    bounceDomain: deps.settings.bounceDomain,
  });
  const stop = deliverySeconds.startTimer();
  const results = (await Promise.all(envelopes.map((e) => transport.deliver(e, raw, hints)))).flat();
  stop();
  const byEmail = new Map(results.map((r) => [lower(r.email), r]));
  for (const row of toSend) {
    const result = byEmail.get(lower(row.email));
    if (result?.ok && result.pending) {
      // Accepted by the provider (SparkPost): no MAIL_DELIVERED now, the callback reports it.
      attempt.accepted(row, result.pending.transmissionId);
      continue;
    }
    if (result?.ok) {
      // A provider that assigns its own ids (Gmail API, Graph) reports those (docs/oauth.md "Sending").
      attempt.delivered(row, result.messageId || messageId, result.threadId ?? '');
      continue;
    }
    let failure: DeliveryFailure = result
      ? result.failure
      : { kind: 'temporary', failedReason: 'No result for this recipient', providerError: '' };
    if (failure.kind === 'auth' && mailer.kind === 'domain') {
      // The relay refused the service's own credentials: an operator problem, not the mailer's.
      failure = {
        ...failure,
        kind: 'temporary',
        failedReason: `SMTP relay refused the service's credentials: ${failure.failedReason}`,
      };
    }
    attempt.smtpFailure(row, failure);
  }
}

interface Failed {
  row: CopyRecipientRow;
  failure: DeliveryFailure;
}

/** Collects the outcomes of one attempt and turns them into events. */
class Attempt {
  private readonly planned: PlannedEvent[] = [];
  private readonly delivery: { rows: CopyRecipientRow[]; messageId: string; threadId: string } = {
    rows: [],
    messageId: '',
    threadId: '',
  };
  private readonly accepts = new Map<string, string[]>();
  private readonly retry: Failed[] = [];
  private readonly final: Failed[] = [];
  authFailure?: DeliveryFailure;
  /** The longest Retry-After a provider gave for a retried recipient. */
  retryAfterMs?: number;

  constructor(
    private readonly s: SendSettings,
    readonly cmd: SendEmailCommand,
  ) {}

  /** A failure before anything was sent (rendering, mailer config): final SMTP_ERROR (spec rule 1). */
  fail(rows: CopyRecipientRow[], reason: string): void {
    for (const row of rows)
      this.final.push({ row, failure: { kind: 'permanent', failedReason: reason, providerError: '' } });
  }

  /** PHISHING, MAIL_POLICY_REJECTION or MAIL_GENERATION_REJECTION for `rows`. */
  other(event: EmailEventType, rows: CopyRecipientRow[], reason: string): void {
    this.planned.push({
      event,
      copyId: this.cmd.copy_id,
      recipients: rows.map((r) => recipient(r, reason)),
      failedReason: reason,
      messageId: '',
    });
  }

  delivered(row: CopyRecipientRow, messageId: string, threadId: string): void {
    this.delivery.rows.push(row);
    this.delivery.messageId = messageId;
    this.delivery.threadId = threadId;
  }

  /** The provider accepted `row` as `transmissionId`; its outcome comes by callback (no event now). */
  accepted(row: CopyRecipientRow, transmissionId: string): void {
    const rows = this.accepts.get(transmissionId) ?? [];
    rows.push(row.logId);
    this.accepts.set(transmissionId, rows);
  }

  acceptances(): Array<{ transmissionId: string; logIds: string[] }> {
    return [...this.accepts].map(([transmissionId, logIds]) => ({ transmissionId, logIds }));
  }

  smtpFailure(row: CopyRecipientRow, failure: DeliveryFailure): void {
    if (failure.kind === 'auth') this.authFailure = failure;
    const retryable = failure.kind === 'temporary' && this.cmd.attempt < this.s.maxAttempts;
    (retryable ? this.retry : this.final).push({ row, failure });
    if (retryable && failure.retryAfterMs !== undefined)
      this.retryAfterMs = Math.max(this.retryAfterMs ?? 0, failure.retryAfterMs);
  }

  events(): PlannedEvent[] {
    const out = [...this.planned];
    if (this.delivery.rows.length > 0) {
      out.push({
        event: 'MAIL_DELIVERED',
        copyId: this.cmd.copy_id,
        recipients: this.delivery.rows.map((r) => recipient(r, '')),
        failedReason: '',
        messageId: this.delivery.messageId,
        threadId: this.delivery.threadId,
      });
    }
    // Each recipient gets one SMTP_ERROR per attempt, all under the command's copy: when the
    // same attempt scheduled a retry for some recipients and ended for others, the two events
    // differ by their recipients (libs/store keys send events per copy, recipients, attempt).
    // Recipients whose failures differ in bounce category (or permanence) get one event each,
    // so that every recipient's event names its own category; still one event per recipient.
    for (const group of byCategory(this.retry)) out.push(this.smtpError(group, true));
    for (const group of byCategory(this.final)) out.push(this.smtpError(group, false));
    return out;
  }

  private smtpError(items: Failed[], retryScheduled: boolean): PlannedEvent {
    const { bounceCategory, kind } = items[0]!.failure;
    return {
      event: 'SMTP_ERROR',
      copyId: this.cmd.copy_id,
      recipients: items.map((f) => recipient(f.row, f.failure.failedReason)),
      failedReason: combine(items, (f) => f.failure.failedReason),
      providerError: combine(items, (f) => f.failure.providerError),
      messageId: '',
      send: { attempt: this.cmd.attempt, maxAttempts: this.s.maxAttempts, retryScheduled },
      ...(bounceCategory ? { bounceCategory } : {}),
      // Only a final, permanent refusal of the address itself suppresses it; a 4xx never does.
      ...(!retryScheduled && kind === 'permanent' && bounceCategory === SUPPRESSING_BOUNCE_CATEGORY
        ? { suppressRecipients: true }
        : {}),
    };
  }
}

/**
 * The DKIM key a copy is signed with: a domain mailer's own; for a provider mailer (SparkPost) the
 * tenant's verified domain of the From address (or its closest parent), if any; else none.
 */
async function signingKey(deps: ConsumerDeps, mailer: SendingMailer, from: string): Promise<DkimKey | null> {
  if (mailer.kind === 'domain')
    return {
      domainName: mailer.domain,
      keySelector: mailer.selector,
      privateKeyPem: mailer.dkimPrivateKeyPem,
    };
  if (mailer.kind !== 'sparkpost') return null;
  const at = from.lastIndexOf('@');
  const key =
    at < 0 ? null : await verifiedDomainKey(deps.db, deps.sealer, mailer.tenantId, from.slice(at + 1));
  return key && { domainName: key.domain, keySelector: key.selector, privateKeyPem: key.privateKeyPem };
}

/** A custom header of the send request by name, case-insensitively. */
function customHeader(headers: Record<string, string> | undefined, name: string): string | undefined {
  const key = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers![key]!.trim() || undefined;
}

function recipient(row: CopyRecipientRow, failureReason: string): EventRecipient {
  return { logId: row.logId, email: row.email, failureReason };
}

/** The failures grouped by bounce category and permanence, in their first occurrence order. */
function byCategory(items: Failed[]): Failed[][] {
  const groups = new Map<string, Failed[]>();
  for (const f of items) {
    const key = `${f.failure.bounceCategory ?? ''}/${f.failure.kind === 'permanent'}`;
    const group = groups.get(key) ?? [];
    group.push(f);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** One text for several recipients: the common text, or `email: text` pairs when they differ. */
function combine(items: Failed[], text: (f: Failed) => string): string {
  const distinct = [...new Set(items.map(text).filter(Boolean))];
  if (distinct.length <= 1) return distinct[0] ?? '';
  return items
    .filter((f) => text(f))
    .map((f) => `${f.row.email}: ${text(f)}`)
    .join('; ');
}
