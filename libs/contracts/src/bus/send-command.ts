import { z } from 'zod';

/**
 * `send.email` command (routing key RoutingKey.sendEmail on Exchange.commands, consumed from
 * Queue.send): send one copy of an accepted send. The request itself is in `sends.request`,
 * the copy's recipients are the `email_logs` rows with this `copy_id`.
 */
export const SEND_EMAIL_COMMAND = 'send.email';
export const SEND_EMAIL_COMMAND_VERSION = 1;

export const SendEmailCommandSchema = z.object({
  ref_id: z.string().min(1),
  tenant_id: z.string().min(1),
  copy_id: z.string().min(1),
  /** 1-based attempt number this delivery of the command performs. */
  attempt: z.number().int().positive(),
});
export type SendEmailCommand = z.infer<typeof SendEmailCommandSchema>;
