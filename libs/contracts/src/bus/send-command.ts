import { z } from 'zod';

/**
 * `send.email` command (routing key RoutingKey.sendEmail on Exchange.commands, consumed from
 * Queue.send): send copies of an accepted send. The request itself is in `sends.request`, a
 * copy's recipients are the `email_logs` rows with its `copy_id`.
 *
 * Two shapes, one message type:
 * - single copy `{ref_id, tenant_id, copy_id, attempt}`: one copy (retries are always this shape);
 * - several copies `{ref_id, tenant_id, copy_ids, attempt}`: the gateway's first attempt at up to
 *   100 copies of one send (a batch with substitutions has a copy per `to` recipient), so a
 *   100-recipient batch is one bus message instead of 100.
 * The send service runs each copy of a command as the single-copy command it names
 * (copiesOfCommand). Both shapes are envelope version 1; version 2 (send-command-group.ts)
 * commands copies of several sends in one message.
 */
export const SEND_EMAIL_COMMAND = 'send.email';
export const SEND_EMAIL_COMMAND_VERSION = 1;

/** Most copies one command names (a send has at most SEND_LIMITS.maxRecipients copies). */
export const MAX_COPIES_PER_COMMAND = 1_000;

const commandBase = {
  ref_id: z.string().min(1),
  tenant_id: z.string().min(1),
  /** 1-based attempt number this delivery of the command performs. */
  attempt: z.number().int().positive(),
};

/** One copy: what the send service processes (and what a retry publishes). */
export const SendEmailCommandSchema = z.object({
  ref_id: commandBase.ref_id,
  tenant_id: commandBase.tenant_id,
  copy_id: z.string().min(1),
  attempt: commandBase.attempt,
});
export type SendEmailCommand = z.infer<typeof SendEmailCommandSchema>;

/** Several copies of one send, each attempted as its own SendEmailCommand. */
export const SendEmailCopiesCommandSchema = z.object({
  ref_id: commandBase.ref_id,
  tenant_id: commandBase.tenant_id,
  copy_ids: z.array(z.string().min(1)).min(1).max(MAX_COPIES_PER_COMMAND),
  attempt: commandBase.attempt,
});
export type SendEmailCopiesCommand = z.infer<typeof SendEmailCopiesCommandSchema>;

/**
 * What a `send.email` message carries: several copies when `copy_ids` is a valid list (checked
 * first, so a payload naming both is never read as its one `copy_id`), else one copy.
 */
export const SendEmailMessageSchema = z.union([SendEmailCopiesCommandSchema, SendEmailCommandSchema]);
export type SendEmailMessage = z.infer<typeof SendEmailMessageSchema>;

/** The single-copy commands a message stands for, in its order. */
export function copiesOfCommand(cmd: SendEmailMessage): SendEmailCommand[] {
  if (!('copy_ids' in cmd)) return [cmd];
  const { ref_id, tenant_id, attempt } = cmd;
  return cmd.copy_ids.map((copy_id) => ({ ref_id, tenant_id, copy_id, attempt }));
}
