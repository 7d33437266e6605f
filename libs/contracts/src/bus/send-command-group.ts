import { z } from 'zod';
import {
  MAX_COPIES_PER_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  type SendEmailCommand,
  SendEmailMessageSchema,
  copiesOfCommand,
} from './send-command';

/**
 * `send.email` version 2 (SEND_EMAIL_GROUP_VERSION): the first attempt at copies of SEVERAL sends
 * in one bus message. The gateway group-commits concurrent sends in one statement
 * (services/gateway group-commit.ts); with this shape their commands are one outbox row and one
 * bus message (up to 100 copies in total, chunked beyond) instead of one per
 * send, so the per-message cost (publish + confirm, deliver, ack, decode) is paid once per group.
 *
 * Payload `{sends: [{tenant_id, ref_id, copy_ids, traceparent?}], attempt}`:
 * - each item is one send (of any tenant) and the copies of it this message commands; the send
 *   service runs every copy as the single-copy command `{ref_id, tenant_id, copy_id, attempt}`
 *   (sendsOfGroup), so a copy is loaded by its own item's (tenant_id, ref_id, copy_id): an item
 *   can never load a copy under another item's tenant;
 * - `traceparent` is the trace of the request that accepted the item's send: the send service
 *   runs the item's copies in that trace, so their events, logs and retries continue the send's
 *   own trace, not the group's (as email.event version 2 keeps one per event);
 * - `attempt` is every item's (the gateway only writes first attempts this way; a retry is always
 *   the single-copy version-1 shape of one copy).
 *
 * Envelope: type `send.email`, version 2, so a reader tells the shapes apart without guessing
 * from the payload; `tenant_id` is the items' tenant when they all share one and absent when they
 * do not (it is informational: nothing is loaded or authorized by it); `traceparent` is the
 * message's own span, a child of the first item's trace. A group of one send is written as
 * version 1 (the per-send shapes of send-command.ts), like email.event groups of one event.
 *
 * How a later version is rolled out: docs/deploy.md "A new `send.email` message version".
 */
export const SEND_EMAIL_GROUP_VERSION = 2;

/** One send's part of a group: which copies of it, and the trace of the request that accepted it. */
export const SendEmailGroupItemSchema = z.object({
  tenant_id: z.string().min(1),
  ref_id: z.string().min(1),
  copy_ids: z.array(z.string().min(1)).min(1).max(MAX_COPIES_PER_COMMAND),
  traceparent: z.string().optional(),
});
export type SendEmailGroupItem = z.infer<typeof SendEmailGroupItemSchema>;

export const SendEmailGroupSchema = z
  .object({
    sends: z.array(SendEmailGroupItemSchema).min(1),
    attempt: z.number().int().positive(),
  })
  .superRefine((g, ctx) => {
    const copies = g.sends.reduce((n, s) => n + s.copy_ids.length, 0);
    if (copies > MAX_COPIES_PER_COMMAND)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['sends'],
        message: `a group names at most ${MAX_COPIES_PER_COMMAND} copies (got ${copies})`,
      });
  });
export type SendEmailGroup = z.infer<typeof SendEmailGroupSchema>;

/** The copies of one send a message commands, as single-copy commands, and the trace they continue. */
export interface CommandedSend {
  tenantId: string;
  /** Undefined: the envelope's trace (version 1, where the envelope is the send's). */
  traceparent?: string;
  copies: SendEmailCommand[];
}

/** The sends of a group in order, each copy as its single-copy command. */
export function sendsOfGroup(g: SendEmailGroup): CommandedSend[] {
  return g.sends.map((s) => {
    const { tenant_id, ref_id } = s;
    const copies = s.copy_ids.map((copy_id) => ({ ref_id, tenant_id, copy_id, attempt: g.attempt }));
    return s.traceparent === undefined
      ? { tenantId: tenant_id, copies }
      : { tenantId: tenant_id, traceparent: s.traceparent, copies };
  });
}

export type DecodedSendEmail = { ok: true; sends: CommandedSend[] } | { ok: false; error: string };

/**
 * The sends of a `send.email` message of either version, checked by its schema (which words the
 * error). Never throws; `ok: false` for an invalid payload or an unknown version.
 */
export function decodeSendEmailMessage(version: number, payload: unknown): DecodedSendEmail {
  if (version === SEND_EMAIL_COMMAND_VERSION) {
    const r = SendEmailMessageSchema.safeParse(payload);
    if (!r.success) return { ok: false, error: r.error.issues[0]?.message ?? 'bad payload' };
    return { ok: true, sends: [{ tenantId: r.data.tenant_id, copies: copiesOfCommand(r.data) }] };
  }
  if (version === SEND_EMAIL_GROUP_VERSION) {
    const r = SendEmailGroupSchema.safeParse(payload);
    if (!r.success) return { ok: false, error: r.error.issues[0]?.message ?? 'bad payload' };
    return { ok: true, sends: sendsOfGroup(r.data) };
  }
  return { ok: false, error: `unknown send.email version ${version}` };
}
