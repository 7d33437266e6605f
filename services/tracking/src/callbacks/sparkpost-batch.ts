/**
 * Processes one stored SparkPost batch inside the caller's transaction (sparkpost-worker.ts), so
 * its events, their suppressions, the event ids seen and the batch's `processed_at` are written
 * together or not at all. Per event (libs/providers sparkpost/events mapping.ts decides):
 * - a type we do not map (injection, delay, open, click, ...) or an unreadable event: nothing;
 * - an event_id this mailer already processed (a batch delivered twice): nothing;
 * - no copy of this tenant matches `ref_id` + `copy_id` + `rcpt_to`: counted as an unknown send;
 * - else the event through the single writer (libs/store feedback.ts applyFeedbackIn ->
 *   recordEmailEventsIn: event row, log status, outbox -> webhooks), stamped at SparkPost's
 *   `timestamp`, with the tenant's suppression where the mapping says so (an unsubscribe by the
 *   one rule of unsubscribes: recorded only when it newly suppresses). Delivery and the two
 *   rejections are the copy's final send event (attempt = the copy's attempts), so a copy ends
 *   once whatever the provider repeats.
 */
import { type EmailEvent, recipientEvent } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import {
  type MappedSparkPostEvent,
  type SparkPostSuppression,
  mapSparkPostEvent,
  parseSparkPostBatch,
} from '@mailyard/providers';
import {
  type ProviderCopyRecipient,
  type StoredCallbackBatch,
  SuppressionReason,
  type SuppressionReasonValue,
  applyFeedbackIn,
  findProviderCopyRecipient,
  providerCallbacks,
} from '@mailyard/store';

/** What became of each event of a batch. */
export type CallbackEventOutcome =
  | 'recorded'
  /** Matched, but nothing new to record (the copy already ended, the address already unsubscribed). */
  | 'unchanged'
  | 'duplicate'
  | 'ignored'
  | 'unknown_send'
  | 'invalid';

const SUPPRESSION: Record<SparkPostSuppression, SuppressionReasonValue> = {
  hard_bounce: SuppressionReason.hardBounce,
  spam_complaint: SuppressionReason.spamComplaint,
  unsubscribed: SuppressionReason.unsubscribed,
};

/** The spec event object of a mapped SparkPost event about `r`. */
export function sparkPostEmailEvent(m: MappedSparkPostEvent, r: ProviderCopyRecipient): EmailEvent {
  const base = recipientEvent(
    m.event,
    { ...r, messageId: m.messageId || r.messageId },
    { failedReason: m.failedReason },
  );
  return {
    ...base,
    details: {
      ...base.details,
      event_at: m.at.toISOString(),
      ...(m.providerError ? { provider_error: m.providerError } : {}),
      ...(m.errorCode !== undefined ? { error_code: m.errorCode } : {}),
      ...(m.numRetries !== undefined ? { num_retries: m.numRetries } : {}),
      ...(m.bounceCategory ? { bounce_category: m.bounceCategory } : {}),
    },
  };
}

async function processEvent(
  tx: Queryable,
  batch: StoredCallbackBatch,
  raw: unknown,
): Promise<CallbackEventOutcome> {
  const outcome = mapSparkPostEvent(raw);
  if (outcome.kind === 'ignored') return 'ignored';
  if (outcome.kind === 'invalid') return 'invalid';
  const eventId = outcome.kind === 'foreign' ? outcome.eventId : outcome.mapped.eventId;
  if (!(await providerCallbacks.firstSeen(tx, batch.tenantId, batch.mailerId, eventId))) return 'duplicate';
  if (outcome.kind === 'foreign') return 'unknown_send';
  const m = outcome.mapped;
  const recipient = await findProviderCopyRecipient(tx, batch.tenantId, m.refId, m.copyId, m.email);
  if (!recipient) return 'unknown_send';
  const recorded = await applyFeedbackIn(tx, {
    recipient,
    event: sparkPostEmailEvent(m, recipient),
    suppress: m.suppress ? SUPPRESSION[m.suppress] : null,
    eventAt: m.at,
    ...(m.final ? { attempt: Math.max(1, recipient.attempts) } : {}),
  });
  return recorded ? 'recorded' : 'unchanged';
}

/** Processes `batch` inside `tx`; the outcome of each of its events, in order. */
export async function processSparkPostBatchIn(
  tx: Queryable,
  batch: StoredCallbackBatch,
): Promise<CallbackEventOutcome[]> {
  let body: unknown;
  try {
    body = JSON.parse(batch.body);
  } catch {
    body = null;
  }
  const parsed = parseSparkPostBatch(body);
  if (!parsed.ok) return [];
  const outcomes: CallbackEventOutcome[] = [];
  for (const raw of parsed.events) outcomes.push(await processEvent(tx, batch, raw));
  return outcomes;
}
