/**
 * GET /v1/domain/{domain}/reputation and POST /v1/domain/{domain}/resume (docs/api/domains.md
 * "Reputation"; docs/deliverability.md "Reputation and automatic pause"): a sending domain's
 * window (its last REPUTATION_WINDOW copies sent, not cleared by a resume), its rates, the
 * thresholds, its open pause, and the same per mailer that sent from it recently.
 */
import { z } from 'zod';
import { PAUSE_METRICS, PAUSE_SCOPES } from '../deliverability/reputation';

export const ReputationPauseSchema = z.object({
  scope: z.enum(PAUSE_SCOPES),
  metric: z.enum(PAUSE_METRICS),
  rate: z.number(),
  /** Copies counted when it paused. */
  window: z.number().int(),
  threshold: z.number(),
  paused_at: z.string(),
  /** The 422 text POST /v1/email/send answers while it lasts. */
  message: z.string(),
});
export type ReputationPause = z.infer<typeof ReputationPauseSchema>;

const counts = {
  sent: z.number().int(),
  invalid_recipient_bounces: z.number().int(),
  complaints: z.number().int(),
  bounce_rate: z.number(),
  complaint_rate: z.number(),
  paused: ReputationPauseSchema.nullable(),
};

export const MailerReputationSchema = z.object({ mailer_id: z.string(), ...counts });
export type MailerReputation = z.infer<typeof MailerReputationSchema>;

export const DomainReputationSchema = z.object({
  domain: z.string(),
  /** REPUTATION_WINDOW: the most copies a window holds. */
  window: z.number().int(),
  ...counts,
  thresholds: z.object({ bounce_rate: z.number(), complaint_rate: z.number(), min_volume: z.number().int() }),
  /** The mailers among the domain's window, most recent first (at most 50), each with its own window. */
  mailers: z.array(MailerReputationSchema),
});
export type DomainReputation = z.infer<typeof DomainReputationSchema>;

export const DomainReputationResponseSchema = z.object({
  success: z.literal(true),
  message: z.string().optional(),
  data: DomainReputationSchema,
});
export type DomainReputationResponse = z.infer<typeof DomainReputationResponseSchema>;
