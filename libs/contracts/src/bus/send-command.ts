import { z } from 'zod';
import { upgradeVersion1SendEmail } from './send-command-version-1';

/**
 * `send.email` (routing key RoutingKey.sendEmail on Exchange.commands, consumed from Queue.send):
 * send copies of accepted sends. A send's request is in `sends.request`, a copy's recipients are
 * the `email_logs` rows with its `copy_id`.
 *
 * One shape, envelope version 2 (SEND_EMAIL_COMMAND_VERSION), written by every producer: the
 * gateway's first attempts (the copies of the sends of one group commit, up to 100 copies per
 * message, services/gateway send-commands.ts), the send service's retries and its restart
 * recovery (a group of one send with one copy, commandOfOneCopy).
 *
 * Payload `{sends: [{tenant_id, ref_id, copy_ids, traceparent?}], attempt}`:
 * - each item is one send (of any tenant) and the copies of it this message commands; the send
 *   service runs every copy as its own SendEmailCommand `{ref_id, tenant_id, copy_id, attempt}`
 *   (commandsOf), so a copy is loaded by its own item's (tenant_id, ref_id, copy_id): an item can
 *   never load a copy under another item's tenant;
 * - `traceparent` is the send's trace: the send service runs the item's copies in it, so their
 *   events, logs and retries continue the trace of the request that accepted the send, not the
 *   message's (absent: the envelope's);
 * - `attempt` is every item's (1-based).
 *
 * Envelope: `tenant_id` is the items' tenant when they all share one and absent when they do not
 * (informational: nothing is loaded or authorized by it); `traceparent` is the message's own span.
 * How a new version is rolled out: docs/deploy.md "A new `send.email` message version".
 */
export const SEND_EMAIL_COMMAND = 'send.email';
export const SEND_EMAIL_COMMAND_VERSION = 2;

/** Most copies one message names (a send has at most SEND_LIMITS.maxRecipients copies). */
export const MAX_COPIES_PER_COMMAND = 1_000;

/** One send's part of a message: which copies of it, and the trace of the request that accepted it. */
export const SendEmailItemSchema = z.object({
  tenant_id: z.string().min(1),
  ref_id: z.string().min(1),
  copy_ids: z.array(z.string().min(1)).min(1).max(MAX_COPIES_PER_COMMAND),
  traceparent: z.string().optional(),
});
export type SendEmailItem = z.infer<typeof SendEmailItemSchema>;

export const SendEmailMessageSchema = z
  .object({
    sends: z.array(SendEmailItemSchema).min(1),
    /** 1-based attempt number this delivery of the message performs, for every copy. */
    attempt: z.number().int().positive(),
  })
  .superRefine((m, ctx) => {
    const copies = m.sends.reduce((n, s) => n + s.copy_ids.length, 0);
    if (copies > MAX_COPIES_PER_COMMAND)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['sends'],
        message: `a message names at most ${MAX_COPIES_PER_COMMAND} copies (got ${copies})`,
      });
  });
export type SendEmailMessage = z.infer<typeof SendEmailMessageSchema>;

/** One attempt at one copy of a send: what the send service runs for each copy a message names. */
export interface SendEmailCommand {
  ref_id: string;
  tenant_id: string;
  copy_id: string;
  attempt: number;
}

/** The message commanding one attempt at one copy (a retry, a recovered copy): a group of one. */
export function commandOfOneCopy(cmd: SendEmailCommand, traceparent?: string): SendEmailMessage {
  const item: SendEmailItem = { tenant_id: cmd.tenant_id, ref_id: cmd.ref_id, copy_ids: [cmd.copy_id] };
  if (traceparent !== undefined) item.traceparent = traceparent;
  return { sends: [item], attempt: cmd.attempt };
}

/** The copies of one send a message commands, and the trace they continue. */
export interface CommandedSend {
  tenantId: string;
  /** Undefined: the envelope's trace. */
  traceparent?: string;
  copies: SendEmailCommand[];
}

/** The sends of a message in order, each copy as its SendEmailCommand. */
export function commandsOf(m: SendEmailMessage): CommandedSend[] {
  return m.sends.map((s) => {
    const { tenant_id, ref_id } = s;
    const copies = s.copy_ids.map((copy_id) => ({ ref_id, tenant_id, copy_id, attempt: m.attempt }));
    return s.traceparent === undefined
      ? { tenantId: tenant_id, copies }
      : { tenantId: tenant_id, traceparent: s.traceparent, copies };
  });
}

export type DecodedSendEmail = { ok: true; sends: CommandedSend[] } | { ok: false; error: string };

/**
 * The sends of a `send.email` message, checked by its schema (which words the error). A message
 * of the previous release's version 1 is upgraded first (send-command-version-1.ts), so nothing
 * past this function knows that shape. Never throws; `ok: false` for an invalid payload or an
 * unknown version.
 */
export function decodeSendEmailMessage(version: number, payload: unknown): DecodedSendEmail {
  if (version !== SEND_EMAIL_COMMAND_VERSION && version !== 1)
    return { ok: false, error: `unknown send.email version ${version}` };
  const message = version === 1 ? upgradeVersion1SendEmail(payload) : payload;
  const r = SendEmailMessageSchema.safeParse(message);
  if (!r.success) return { ok: false, error: r.error.issues[0]?.message ?? 'bad payload' };
  return { ok: true, sends: commandsOf(r.data) };
}
