/**
 * Everything this service posts goes to the mailer's own incoming webhook through the webhook
 * dispatcher: a MAILER_WEBHOOK bus message (libs/contracts bus/mailer-webhook.ts) that the
 * dispatcher stores as a single-object delivery with its extra headers, retried and recorded
 * like any other. `publish` resolves once the broker confirmed the message, so a checkpoint
 * written after it never skips a message (at-least-once).
 */
import {
  type BackfillEventName,
  type BackfillLifecycleEvent,
  Exchange,
  type ImapErrorEvent,
  MAILER_WEBHOOK_MESSAGE,
  MAILER_WEBHOOK_MESSAGE_VERSION,
  type MailerWebhookMessage,
  RoutingKey,
} from '@mailyard/contracts';
import { type Bus, envelope } from '@mailyard/platform';
import type { BackfillJob } from '@mailyard/store';

export const BACKFILL_JOB_HEADER = 'X-History-Backfill-Job-Id';

/** Not `async`: the payload is not kept alive until the confirm (an async function holds its arguments). */
export function postToMailer(bus: Bus, tenantId: string, message: MailerWebhookMessage): Promise<void> {
  return bus.publish(
    Exchange.events,
    RoutingKey.mailerWebhook,
    envelope(MAILER_WEBHOOK_MESSAGE, message, { version: MAILER_WEBHOOK_MESSAGE_VERSION, tenantId }),
  );
}

export function lifecycleEvent(
  name: BackfillEventName,
  job: Pick<BackfillJob, 'id' | 'mailerId' | 'count' | 'startedAt'>,
  p: { status: string; processed: number; percent: number; endedAt?: Date | null; failedReason?: string },
): BackfillLifecycleEvent {
  return {
    event: name,
    success: name !== 'HISTORY_BACKFILL_FAILED',
    details: {
      job_id: job.id,
      mailer_id: job.mailerId,
      status: p.status,
      processed: p.processed,
      target: job.count,
      percent: p.percent,
      started_at: job.startedAt.toISOString(),
      ended_at: p.endedAt ? p.endedAt.toISOString() : '',
      failed_reason: p.failedReason ?? '',
      event_at: new Date().toISOString(),
    },
  };
}

export async function postLifecycle(bus: Bus, tenantId: string, e: BackfillLifecycleEvent): Promise<void> {
  await postToMailer(bus, tenantId, {
    mailer_id: e.details.mailer_id,
    event: e.event,
    body: e as unknown as Record<string, unknown>,
    headers: { [BACKFILL_JOB_HEADER]: e.details.job_id },
  });
}

export async function postImapError(bus: Bus, tenantId: string, e: ImapErrorEvent): Promise<void> {
  await postToMailer(bus, tenantId, {
    mailer_id: e.details.mailer_id,
    event: e.event,
    body: e as unknown as Record<string, unknown>,
  });
}
